/**
 * One HTTP request of a sandbox (plain, or inside TLS our proxy terminated): judged by the host it
 * names and the port it was sent to, given the headers an injection rule adds, and forwarded to that
 * host, as the runtime resolves it. The address the sandbox dialed plays no part: a request cannot
 * borrow an allowed address to reach a denied host. Over TLS the Host must be the name the client's
 * TLS asked for, and the upstream connection is TLS to that name, its certificate checked.
 *
 * A refusal is a 403 whose body says what was refused and by which rule; every request, refused or
 * not, goes into the audit trail with its bytes each way. Secret values are kept out of every error
 * said back.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { request as httpRequest, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Duplex } from "node:stream";
import { rootCertificates } from "node:tls";
import { decide, injectionFor, normalizeHost, redactSecrets } from "../../protocol/network-policy.ts";
import type { AuditRecord } from "./audit-log.ts";
import { flowOf } from "./flow-context.ts";
import type { SandboxEgress } from "./sandbox-egress.ts";
import { neverReached, resolveTargets, type Target } from "./upstream.ts";

/** Headers about one hop, never passed on (RFC 9110 7.6.1), and the proxy's own. */
const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"]);

export async function forwardRequest(egress: SandboxEgress, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const flow = flowOf(req.socket);
  const port = flow?.destination.port ?? 80;
  const tls = flow?.serverName !== undefined;
  const host = hostOf(req.headers.host);
  const path = (req.url ?? "/").split("?")[0]!;
  let bytesOut = 0;
  req.on("data", (chunk: Buffer) => (bytesOut += chunk.length));
  const record = (fields: Partial<AuditRecord> & Pick<AuditRecord, "decision" | "rule">) =>
    egress.audit.add({ kind: tls ? "https" : "http", ...(host ? { host } : {}), port, method: req.method ?? "GET", path, bytesOut, bytesIn: 0, ...fields });
  const refuse = (status: number, rule: string, reason: string, ip?: string) => {
    record({ decision: "denied", rule, reason, status, ...(ip ? { ip } : {}) });
    const body = `egress denied: ${req.method} ${tls ? "https" : "http"}://${host ?? "?"}:${port}${path}: ${reason} (rule ${rule})\n`;
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "x-sandbox-egress": `denied; rule=${rule}`, connection: "close" });
    res.end(body);
    req.resume();
  };

  if (!host) return refuse(400, "proxy", "the request names no Host");
  if (tls && host !== flow!.serverName) return refuse(421, "proxy", `the Host (${host}) is not the name TLS asked for (${flow!.serverName})`);
  const byName = decide(egress.policy, { names: [host], port });
  if (!byName.allowed) return refuse(403, byName.rule, "denied by the policy");
  let target: Target | undefined;
  try {
    target = (await resolveTargets(host, port, egress.testHosts))[0];
  } catch (error) {
    return refuse(502, "proxy", `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "lookup failed"})`);
  }
  if (!target) return refuse(502, "proxy", `${host} has no address`);
  const never = target.mapped ? undefined : neverReached(target.host);
  if (never) return refuse(403, "never", never, target.host);
  const verdict = target.mapped ? byName : decide(egress.policy, { names: [host], ip: target.host, port });
  if (!verdict.allowed) return refuse(403, verdict.rule, "denied by the policy (its address)", target.host);

  const injection = injectionFor(egress.policy, host, port, egress.secrets);
  const headers = passedHeaders(req, injection?.headers ?? {});
  const options = { host: target.host, port: target.port, method: req.method, path: req.url, headers, setHost: false };
  const upstream = tls
    ? httpsRequest({ ...options, servername: host, ...(target.mapped && egress.testHosts?.ca ? { ca: [...rootCertificates, egress.testHosts.ca] } : {}) })
    : httpRequest(options);
  const decision = injection && injection.missing.length === 0 ? "injected" : "allowed";
  const rule = decision === "injected" ? `${verdict.rule}+${injection!.rule}` : verdict.rule;
  const missing = injection?.missing.length ? `secrets not set: ${injection.missing.join(", ")}` : undefined;
  upstream.on("response", (answer) => {
    let bytesIn = 0;
    answer.on("data", (chunk: Buffer) => (bytesIn += chunk.length));
    const raw: string[] = [];
    for (let i = 0; i < answer.rawHeaders.length; i += 2) {
      if (!HOP_HEADERS.has(answer.rawHeaders[i]!.toLowerCase())) raw.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
    }
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, raw);
    answer.pipe(res);
    res.once("close", () => {
      if (!res.writableFinished) answer.destroy();
      record({ decision, rule, ip: target.host, status: answer.statusCode ?? 0, bytesIn, ...(missing ? { reason: missing } : {}) });
    });
  });
  upstream.on("error", (error) => {
    const reason = redactSecrets(`upstream: ${(error as NodeJS.ErrnoException).code ?? error.message}`, egress.secrets);
    if (res.headersSent) {
      record({ decision, rule, ip: target.host, reason });
      res.destroy();
      return;
    }
    record({ decision, rule, ip: target.host, status: 502, reason });
    res.writeHead(502, { "content-type": "text/plain; charset=utf-8", "x-sandbox-egress": "upstream-failed" });
    res.end(`egress: ${host}:${port} failed: ${reason}\n`);
  });
  req.pipe(upstream);
}

/** A protocol upgrade (WebSocket) is not forwarded: refused plainly rather than left hanging. */
export function refuseUpgrade(egress: SandboxEgress, req: IncomingMessage, socket: Duplex): void {
  const flow = flowOf(req.socket);
  const host = hostOf(req.headers.host);
  egress.audit.add({
    kind: flow?.serverName ? "https" : "http",
    ...(host ? { host } : {}),
    port: flow?.destination.port ?? 80,
    method: req.method ?? "GET",
    path: (req.url ?? "/").split("?")[0]!,
    bytesOut: 0,
    bytesIn: 0,
    decision: "denied",
    rule: "proxy",
    reason: "protocol upgrades (WebSocket) are not forwarded",
    status: 501,
  });
  socket.end("HTTP/1.1 501 Not Implemented\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\negress: protocol upgrades are not forwarded\n");
}

/** The host a Host header names, as rules compare it (no port). */
function hostOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(header.trim());
  return match ? normalizeHost(match[1]!) : undefined;
}

/** The request's headers as sent, less those of the hop, with the injected ones set (replacing the sandbox's own). */
function passedHeaders(req: IncomingMessage, injected: Record<string, string>): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (HOP_HEADERS.has(lower) || lower in injected) continue;
    const value = req.rawHeaders[i + 1]!;
    const existing = headers[name];
    headers[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [String(existing)]), value];
  }
  for (const [name, value] of Object.entries(injected)) headers[name] = value;
  return headers;
}
