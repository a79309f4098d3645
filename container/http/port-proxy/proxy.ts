/**
 * The container server's preview-port proxy: `/api/ports/{port}/proxy/{rest}` goes to
 * `127.0.0.1:{port}` in the sandbox's network (through the isolation's PortConnector), as `{rest}`.
 * HTTP requests of any method are piped both ways with node:http, bodies streaming as they come; a
 * WebSocket (any upgrade) gets its request head written to the port and the raw sockets piped.
 * `/api/ports/{port}/tunnel` with `Upgrade: tcp` is a raw connection to the port, nothing written to
 * it first (the local runtime's sidecar carries workerd's `getTcpPort` connections this way).
 *
 * It sits beside the route table rather than in it (a path of any depth, any method, upgrades), and
 * behind the same secret: server.ts checks it before handing a request here. The caller's own
 * Authorization travels in PORT_HEADERS.carriedAuthorization (the hop's Authorization is the
 * server's secret) and is restored; hop-by-hop headers stay on their hop. The server on the port sees
 * `Host: localhost:{port}`, as it would when its author runs it locally; X-Forwarded-* say the rest.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { ERROR_CODES, errorBody, type ErrorCode } from "../../../protocol/errors.ts";
import { PORT_HEADERS, PORT_PROXY_ROUTES } from "../../../protocol/preview-ports.ts";
import { sendError, sendErrorCode } from "../../../server-kit/http/response.ts";
import { isServiceError } from "../../../server-kit/service-error.ts";
import type { PortConnector } from "../../ports/port-connector.ts";

/** node:http through require and on first use, as serve.ts explains (an ESM import would load undici). */
const requireHere = createRequire(import.meta.url);
const nodeHttp = () => requireHere("node:http") as typeof import("node:http");

/** Headers that belong to one hop, never forwarded (an upgrade keeps `connection` and `upgrade`). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "proxy-authenticate"]);

export interface ProxyTarget {
  port: number;
  /** The path and query to ask the port for (starts with `/`). */
  path: string;
}

/** The port and path a request for the proxy asks for; undefined when the request is not for the proxy. */
export function proxyTargetOf(rawUrl: string | undefined): ProxyTarget | undefined {
  if (!rawUrl?.startsWith(PORT_PROXY_ROUTES.prefix)) return undefined;
  const queryAt = rawUrl.indexOf("?");
  const pathname = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
  const match = PORT_PROXY_ROUTES.pattern.exec(pathname);
  if (!match) return undefined;
  const rest = match[2] || "/";
  return { port: Number(match[1]), path: rest + (queryAt === -1 ? "" : rawUrl.slice(queryAt)) };
}

/** The request's headers for the port, as [name, value] pairs in their order. */
function forwardedHeaders(req: IncomingMessage, port: number, upgrade: boolean): [string, string][] {
  const out: [string, string][] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "authorization") continue;
    if (lower === PORT_HEADERS.carriedAuthorization) {
      out.push(["authorization", raw[i + 1]!]);
      continue;
    }
    if (HOP_BY_HOP.has(lower) && !(upgrade && (lower === "connection" || lower === "upgrade"))) continue;
    out.push([name, raw[i + 1]!]);
  }
  out.unshift(["host", `localhost:${port}`]);
  return out;
}

/** The port's response headers for the caller, without the hop's own. */
function returnedHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (HOP_BY_HOP.has(raw[i]!.toLowerCase())) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** An HTTP request for the port: connected first (PORT_NOT_LISTENING if nothing listens), then piped. */
export async function proxyHttp(ports: PortConnector, target: ProxyTarget, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let socket: Socket;
  try {
    socket = await ports.connect(target.port);
  } catch (error) {
    req.resume();
    sendError(res, error);
    return;
  }
  const headers = forwardedHeaders(req, target.port, false);
  const upstream = nodeHttp().request({
    method: req.method,
    path: target.path,
    headers: headers.flat(),
    createConnection: () => socket,
  });
  // A connector may hand the socket over paused (it read a line first): reading starts once the client listens.
  upstream.once("socket", (connected) => connected.resume());
  upstream.on("response", (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, returnedHeaders(answer.rawHeaders));
    // Each chunk goes on as it comes: a streamed answer reaches the caller before it ends.
    res.flushHeaders();
    answer.pipe(res);
    answer.on("error", () => res.destroy());
  });
  upstream.on("error", (error) => {
    if (!res.headersSent) {
      sendErrorCode(res, "PORT_NOT_LISTENING", `the server on port ${target.port} closed the connection: ${error.message}`, { port: target.port });
    } else res.destroy();
  });
  // The caller went away: so does the request to the port.
  res.on("close", () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}

/** An upgrade (a WebSocket) for the port: its request head is written to the port, then the sockets are piped. */
export async function proxyUpgrade(ports: PortConnector, target: ProxyTarget, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const upstream = await connectOrRefuse(ports, target.port, socket);
  if (!upstream) return;
  const lines = [`${req.method ?? "GET"} ${target.path} HTTP/1.1`, ...forwardedHeaders(req, target.port, true).map(([name, value]) => `${name}: ${value}`)];
  upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
  if (head.length > 0) upstream.write(head);
  upstream.on("error", () => socket.destroy());
  socket.on("error", () => upstream.destroy());
  upstream.on("close", () => socket.destroy());
  socket.on("close", () => upstream.destroy());
  upstream.pipe(socket);
  socket.pipe(upstream);
}

/** The port a raw tunnel asks for (PORT_PROXY_ROUTES.tunnel); undefined when the request is not one. */
export function tunnelPortOf(rawUrl: string | undefined): number | undefined {
  if (!rawUrl?.startsWith(PORT_PROXY_ROUTES.prefix)) return undefined;
  const match = PORT_PROXY_ROUTES.tunnelPattern.exec(rawUrl);
  return match ? Number(match[1]) : undefined;
}

/** A raw TCP tunnel to the port: 101 once connected (PORT_NOT_LISTENING if nothing listens), then the sockets piped as they are. */
export async function proxyTunnel(ports: PortConnector, port: number, socket: Duplex, head: Buffer): Promise<void> {
  const upstream = await connectOrRefuse(ports, port, socket);
  if (!upstream) return;
  upstream.setNoDelay(true);
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: ${PORT_PROXY_ROUTES.tunnelProtocol}\r\n\r\n`);
  if (head.length > 0) upstream.write(head);
  upstream.on("error", () => socket.destroy());
  socket.on("error", () => upstream.destroy());
  // pipe() passes each side's end of writing on (a caller that half-closes still reads the answer);
  // a side gone ends the other once what it sent is written, never cutting it short.
  upstream.on("close", () => socket.end());
  socket.on("close", () => upstream.destroy());
  upstream.pipe(socket);
  socket.pipe(upstream);
  upstream.resume();
}

/** A connection to the port inside the sandbox, or undefined once the refusal is answered on `socket`. */
async function connectOrRefuse(ports: PortConnector, port: number, socket: Duplex): Promise<Socket | undefined> {
  try {
    return await ports.connect(port);
  } catch (error) {
    if (isServiceError(error)) refuseUpgrade(socket, error.code, error.message);
    else refuseUpgrade(socket, "INTERNAL_ERROR", (error as Error).message);
    return undefined;
  }
}

/** A coded error answered on a socket that asked to upgrade (there is no response object). */
export function refuseUpgrade(socket: Duplex, code: ErrorCode, message: string): void {
  const body = JSON.stringify(errorBody(code, message));
  socket.end(`HTTP/1.1 ${ERROR_CODES[code]} ${code}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}
