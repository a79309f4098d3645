/**
 * What the proxy decides about one HTTP request of a sandbox (plain, or inside TLS it terminated),
 * before anything goes out: the host the request names and the port it was sent to, whether the
 * policy lets it through (by name, then by the address the runtime resolves the name to), where it
 * goes, and which headers an injection rule adds. The address the sandbox dialed plays no part. Over
 * TLS the Host must be the name the client's TLS asked for. Shared by plain requests
 * (http-forward.ts) and protocol upgrades (upgrade-forward.ts), so both are judged alike.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { request as httpRequest, type ClientRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { rootCertificates } from "node:tls";
import { decide, injectionFor, normalizeHost } from "../../protocol/network-policy.ts";
import type { AuditRecord } from "./audit-log.ts";
import { flowOf } from "./flow-context.ts";
import type { SandboxEgress } from "./sandbox-egress.ts";
import { neverReached, resolveTargets, type Target } from "./upstream.ts";

/** Headers about one hop, never passed on (RFC 9110 7.6.1), and the proxy's own. */
export const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"]);

/** What is known of a request before it is judged: what the audit trail says of it. */
export interface RequestFacts {
  host: string | undefined;
  port: number;
  tls: boolean;
  method: string;
  path: string;
}

export type Judgement =
  | { allowed: false; status: number; rule: string; reason: string; ip?: string }
  | {
      allowed: true;
      host: string;
      target: Target;
      /** `injected` when an injection rule's headers go on it. */
      decision: "allowed" | "injected";
      rule: string;
      /** The injection rule's headers (replacing the sandbox's own of those names). */
      injected: Record<string, string>;
      /** Secrets an injection rule names that are not set. */
      missing: string | undefined;
    };

export function factsOf(req: IncomingMessage): RequestFacts {
  const flow = flowOf(req.socket);
  return {
    host: hostOf(req.headers.host),
    port: flow?.destination.port ?? 80,
    tls: flow?.serverName !== undefined,
    method: req.method ?? "GET",
    path: (req.url ?? "/").split("?")[0]!,
  };
}

/** The audit entry of a request, from its facts and what happened. */
export function auditRecord(facts: RequestFacts, fields: Partial<AuditRecord> & Pick<AuditRecord, "decision" | "rule">): AuditRecord {
  return {
    kind: facts.tls ? "https" : "http",
    ...(facts.host ? { host: facts.host } : {}),
    port: facts.port,
    method: facts.method,
    path: facts.path,
    bytesOut: 0,
    bytesIn: 0,
    ...fields,
  };
}

export async function judgeRequest(egress: SandboxEgress, req: IncomingMessage, facts: RequestFacts): Promise<Judgement> {
  const { host, port } = facts;
  const serverName = flowOf(req.socket)?.serverName;
  if (!host) return { allowed: false, status: 400, rule: "proxy", reason: "the request names no Host" };
  if (facts.tls && host !== serverName) return { allowed: false, status: 421, rule: "proxy", reason: `the Host (${host}) is not the name TLS asked for (${serverName})` };
  const byName = decide(egress.policy, { names: [host], port });
  if (!byName.allowed) return { allowed: false, status: 403, rule: byName.rule, reason: "denied by the policy" };
  let target: Target | undefined;
  try {
    target = (await resolveTargets(host, port, egress.testHosts))[0];
  } catch (error) {
    return { allowed: false, status: 502, rule: "proxy", reason: `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "lookup failed"})` };
  }
  if (!target) return { allowed: false, status: 502, rule: "proxy", reason: `${host} has no address` };
  const never = target.mapped ? undefined : neverReached(target.host);
  if (never) return { allowed: false, status: 403, rule: "never", reason: never, ip: target.host };
  const verdict = target.mapped ? byName : decide(egress.policy, { names: [host], ip: target.host, port });
  if (!verdict.allowed) return { allowed: false, status: 403, rule: verdict.rule, reason: "denied by the policy (its address)", ip: target.host };
  const injection = injectionFor(egress.policy, host, port, egress.secrets);
  const injected = injection !== undefined && injection.missing.length === 0;
  return {
    allowed: true,
    host,
    target,
    decision: injected ? "injected" : "allowed",
    rule: injected ? `${verdict.rule}+${injection.rule}` : verdict.rule,
    injected: injection?.headers ?? {},
    missing: injection?.missing.length ? `secrets not set: ${injection.missing.join(", ")}` : undefined,
  };
}

/** The request to the judged host: TLS to that name (its certificate checked) when the sandbox's was TLS. */
export function upstreamRequest(egress: SandboxEgress, judged: Extract<Judgement, { allowed: true }>, facts: RequestFacts, req: IncomingMessage, headers: OutgoingHttpHeaders): ClientRequest {
  const options: RequestOptions = { host: judged.target.host, port: judged.target.port, method: req.method, path: req.url, headers, setHost: false };
  if (!facts.tls) return httpRequest(options);
  const testCa = judged.target.mapped && egress.testHosts?.ca ? { ca: [...rootCertificates, egress.testHosts.ca] } : {};
  return httpsRequest({ ...options, servername: judged.host, ...testCa });
}

/** The host a Host header names, as rules compare it (no port). */
function hostOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(header.trim());
  return match ? normalizeHost(match[1]!) : undefined;
}

/** The request's headers as sent, less those of the hop, with the injected ones set (replacing the sandbox's own). */
export function passedHeaders(req: IncomingMessage, injected: Record<string, string>): OutgoingHttpHeaders {
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
