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
 * The request and its answer pass as streams, and a WebSocket handshake is joined byte for byte to
 * its destination once sent; nothing is judged or kept here (the handler judged it, and its audit
 * entry reaches the trail through `POST …/egress/audit`).
 */
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect as netConnect, isIP } from "node:net";
import type { Duplex } from "node:stream";
import { connect as tlsConnect, rootCertificates } from "node:tls";
import { RUNTIME_EGRESS_SEND } from "../../protocol/runtime.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { TestHostMap } from "./test-hosts.ts";
import { neverReached, resolveTargets, type Target } from "./upstream.ts";

/** Headers of one hop, which neither the request nor its answer carries on (RFC 9110 7.6.1), and framing Node sets itself. */
const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length"]);

/** Where a carried request goes: its destination's address (the runtime's choice), or why none is reached. */
type Destination = { url: URL; name: string; port: number; tls: boolean; target: Target } | { refused: "never" | "failed"; reason: string };

async function destinationOf(url: URL, testHosts: TestHostMap | undefined): Promise<Destination> {
  const tls = url.protocol === "https:";
  const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port);
  const name = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  let targets: Target[];
  try {
    targets = await resolveTargets(name, port, testHosts);
  } catch (error) {
    return { refused: "failed", reason: `${name} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
  const target = targets.find((candidate) => candidate.mapped || neverReached(candidate.host) === undefined);
  if (target) return { url, name, port, tls, target };
  return targets.length > 0 ? { refused: "never", reason: neverReached(targets[0]!.host)! } : { refused: "failed", reason: `${name} has no address` };
}

/** TLS options towards the destination: its name checked (the test map's authority too, for a mapped one). */
function tlsTo(destination: Exclude<Destination, { refused: string }>, testHosts: TestHostMap | undefined): { servername?: string; ca?: string[] } {
  return { ...(isIP(destination.name) ? {} : { servername: destination.name }), ...(destination.target.mapped && testHosts?.ca ? { ca: [...rootCertificates, testHosts.ca] } : {}) };
}

/** Carries `req` (a `POST …/egress/send` of the Worker's) to its destination and its answer back on `res`; settles when both are done. */
export async function carryWorkerRequest(req: IncomingMessage, res: ServerResponse, testHosts: TestHostMap | undefined): Promise<void> {
  const { url, method, headers } = carried(req);
  const destination = await destinationOf(url, testHosts);
  if ("refused" in destination) return refuse(res, destination.refused, destination.reason);
  const { name, port, tls, target } = destination;
  const length = req.headers["content-length"];
  const options = {
    host: target.host,
    port: target.port,
    method,
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, host: url.host, ...(length === undefined ? {} : { "content-length": length }) },
    agent: false,
    ...(tls ? tlsTo(destination, testHosts) : {}),
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

/**
 * A WebSocket handshake the handler let through (workerd's own, on the call's connection): sent to
 * the destination with the handshake's fields and the request's headers, and once the destination
 * answers, the two connections are joined byte for byte, so workerd and the server speak WebSocket
 * to each other through the runtime until either closes.
 */
export async function carryWorkerUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, testHosts: TestHostMap | undefined): Promise<void> {
  socket.on("error", () => undefined);
  let request: ReturnType<typeof carried>;
  try {
    request = carried(req);
  } catch (error) {
    return rawRefusal(socket, "failed", (error as Error).message);
  }
  const destination = await destinationOf(request.url, testHosts);
  if ("refused" in destination) return rawRefusal(socket, destination.refused, destination.reason);
  const { url, target } = destination;
  const handshake = Object.entries(req.headers).filter(([field]) => field.startsWith("sec-websocket-"));
  const fields = [
    ...Object.entries(request.headers).filter(([field]) => !field.startsWith("sec-websocket-")),
    ...handshake,
    ["host", url.host],
    ["connection", "Upgrade"],
    ["upgrade", String(req.headers.upgrade ?? "websocket")],
  ].flatMap(([field, value]) => (Array.isArray(value) ? value : [value]).map((one) => `${field}: ${String(one)}`));
  const upstream = destination.tls
    ? tlsConnect({ host: target.host, port: target.port, ...tlsTo(destination, testHosts) })
    : netConnect({ host: target.host, port: target.port });
  upstream.on("error", (error) => {
    if (!socket.destroyed) rawRefusal(socket, "failed", `${destination.name}:${destination.port}: ${(error as NodeJS.ErrnoException).code ?? error.message}`);
  });
  upstream.once(destination.tls ? "secureConnect" : "connect", () => {
    upstream.removeAllListeners("error");
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
    upstream.write(`${request.method} ${url.pathname}${url.search} HTTP/1.1\r\n${fields.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
    upstream.once("close", () => socket.destroy());
    socket.once("close", () => upstream.destroy());
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

function rawRefusal(socket: Duplex, why: "never" | "failed", reason: string): void {
  const body = Buffer.from(reason);
  socket.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain; charset=utf-8\r\n${RUNTIME_EGRESS_SEND.refusedHeader}: ${why}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${reason}`);
}

function refuse(res: ServerResponse, why: "never" | "failed", reason: string): void {
  res.writeHead(502, { "content-type": "text/plain; charset=utf-8", [RUNTIME_EGRESS_SEND.refusedHeader]: why });
  res.end(reason);
}
