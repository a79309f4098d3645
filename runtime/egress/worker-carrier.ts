/**
 * The runtime as the carrier of the Worker's outbound handler, locally. A sandbox's HTTP(S) request
 * that workerd's interception handed to the handler, and that the handler judged (and injected), goes
 * out from here rather than from workerd's own `fetch`, so that what only the local runtime adds
 * holds for it as for the proxy's own requests: the name is resolved by the runtime (the test name
 * map where one is on), and this machine's loopback, unspecified, link-local and multicast addresses
 * are never reached (workerd runs on the host: its `fetch` would reach the runtime's API, the Docker
 * engine, anything listening on loopback). TLS to the destination is checked against the system's
 * authorities (and the test map's, for a mapped name). Redirects are not followed: the answer goes
 * back as it came, and the container asks again for wherever it leads.
 *
 * The request and its answer pass as streams; nothing is judged or kept here (the handler judged it,
 * and its audit entry reaches the trail through `POST …/egress/audit`).
 */
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { rootCertificates } from "node:tls";
import { RUNTIME_EGRESS_SEND } from "../../protocol/runtime.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { TestHostMap } from "./test-hosts.ts";
import { neverReached, resolveTargets } from "./upstream.ts";

/** Headers of one hop, which neither the request nor its answer carries on (RFC 9110 7.6.1), and framing Node sets itself. */
const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length"]);

/** Carries `req` (a `POST …/egress/send` of the Worker's) to its destination and its answer back on `res`; settles when both are done. */
export async function carryWorkerRequest(req: IncomingMessage, res: ServerResponse, testHosts: TestHostMap | undefined): Promise<void> {
  const { url, method, headers } = carried(req);
  const tls = url.protocol === "https:";
  const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port);
  const name = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  let targets: Awaited<ReturnType<typeof resolveTargets>>;
  try {
    targets = await resolveTargets(name, port, testHosts);
  } catch (error) {
    return refuse(res, "failed", `${name} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const target = targets.find((candidate) => candidate.mapped || neverReached(candidate.host) === undefined);
  if (!target) return refuse(res, targets.length > 0 ? "never" : "failed", targets.length > 0 ? neverReached(targets[0]!.host)! : `${name} has no address`);

  const length = req.headers["content-length"];
  const options = {
    host: target.host,
    port: target.port,
    method,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, host: url.host, ...(length === undefined ? {} : { "content-length": length }) },
    agent: false,
    ...(tls ? { ...(isIP(name) ? {} : { servername: name }), ...(target.mapped && testHosts?.ca ? { ca: [...rootCertificates, testHosts.ca] } : {}) } : {}),
  };
  await new Promise<void>((resolve) => {
    const outbound = (tls ? httpsRequest : httpRequest)(options);
    outbound.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passedOn(answer.headers));
      answer.pipe(res);
      answer.on("error", () => res.destroy());
    });
    outbound.on("error", (error) => {
      if (res.headersSent) res.destroy();
      else refuse(res, "failed", `${name}:${port}: ${(error as NodeJS.ErrnoException).code ?? error.message}`);
    });
    // The Worker gave up (the container stopped reading): so does the request out.
    res.once("close", () => {
      if (!res.writableFinished) outbound.destroy();
      resolve();
    });
    req.pipe(outbound);
  });
}

function carried(req: IncomingMessage): { url: URL; method: string; headers: OutgoingHttpHeaders } {
  const method = String(req.headers[RUNTIME_EGRESS_SEND.methodHeader] ?? "GET");
  const rawUrl = req.headers[RUNTIME_EGRESS_SEND.urlHeader];
  const rawHeaders = req.headers[RUNTIME_EGRESS_SEND.headersHeader];
  let url: URL;
  let pairs: unknown;
  try {
    url = new URL(String(rawUrl));
    pairs = JSON.parse(decodeURIComponent(String(rawHeaders ?? "%5B%5D")));
  } catch {
    throw new ServiceError("INVALID_REQUEST", `a carried request names its URL (${RUNTIME_EGRESS_SEND.urlHeader}) and its headers (${RUNTIME_EGRESS_SEND.headersHeader})`);
  }
  if (!/^[A-Za-z]+$/.test(method) || (url.protocol !== "http:" && url.protocol !== "https:") || !Array.isArray(pairs) || !pairs.every((pair) => Array.isArray(pair) && pair.length === 2 && pair.every((part) => typeof part === "string"))) {
    throw new ServiceError("INVALID_REQUEST", "a carried request is HTTP or HTTPS, with a method, its headers [name, value] pairs");
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of pairs as [string, string][]) {
    const lower = name.toLowerCase();
    if (HOP_HEADERS.has(lower)) continue;
    const had = headers[lower];
    headers[lower] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  }
  return { url, method: method.toUpperCase(), headers };
}

function passedOn(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && (name === "content-length" || !HOP_HEADERS.has(name))));
}

function refuse(res: ServerResponse, why: "never" | "failed", reason: string): void {
  res.writeHead(502, { "content-type": "text/plain; charset=utf-8", [RUNTIME_EGRESS_SEND.refusedHeader]: why });
  res.end(reason);
}
