/**
 * Serving a route table over node:http: each request goes to its route's handler with the context
 * the server builds for it; an unknown path is 404 NOT_FOUND, a known path with another method 405
 * METHOD_NOT_ALLOWED (with `allow`), and whatever a handler throws becomes an error response. A
 * server given a secret answers 401 UNAUTHORIZED to any request without it, before routing.
 */
import type { IncomingMessage, RequestListener, Server, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { duplexPair, type Duplex } from "node:stream";
import { carriesSecret } from "./bearer.ts";
import { sendError, sendErrorCode } from "./response.ts";
import type { Router } from "./router.ts";
import { settleUnreadBody } from "./unread-body.ts";

/**
 * node:http through require, not an ESM import: an ESM import copies every export of the module, and
 * one of them (http.WebSocket) loads undici on first read — ~2 MB of heap and ~10 MB resident that
 * every spawn of the container server then pays for, since forking costs in proportion to the
 * server's resident memory. Required when the server is made, not when this module is: a V8 startup
 * snapshot (container/boot/snapshot.ts) can hold this module but not node:http.
 */
const requireHere = createRequire(import.meta.url);
const nodeHttp = () => requireHere("node:http") as typeof import("node:http");

/** What every handler's context has: the request, its response, its URL and the route's parameters. */
export interface RoutedRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
}

/** Builds a handler's context for a matched request: the RoutedRequest fields and what the server adds. */
export type ContextOf<C extends RoutedRequest> = (req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>) => C;

export interface RoutingOptions {
  /** Requests must carry it (`Authorization: Bearer <secret>`); unset: every request is served. */
  secret?: string | undefined;
}

export function routeRequests<C extends RoutedRequest>(router: Router<C>, contextOf: ContextOf<C>, options: RoutingOptions = {}): RequestListener {
  return (req, res) => void dispatch(router, contextOf, options, req, res);
}

async function dispatch<C extends RoutedRequest>(
  router: Router<C>,
  contextOf: ContextOf<C>,
  options: RoutingOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  try {
    if (options.secret !== undefined && !carriesSecret(req, options.secret)) {
      // The body is never read: the connection cannot carry another request.
      sendErrorCode(res, "UNAUTHORIZED", "this server answers only to its secret (Authorization: Bearer …)", undefined, { connection: "close" });
      return;
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    const match = router.match(req.method ?? "GET", url.pathname);
    if (match.kind === "not-found") {
      sendErrorCode(res, "NOT_FOUND", `no route for ${req.method} ${url.pathname}`);
      return;
    }
    if (match.kind === "method-not-allowed") {
      sendErrorCode(res, "METHOD_NOT_ALLOWED", `${req.method} is not allowed on ${url.pathname}`, { allowed: match.allowed }, {
        allow: match.allowed.join(", "),
      });
      return;
    }
    await match.handler(contextOf(req, res, url, match.params));
  } catch (error) {
    settleUnreadBody(req, res);
    sendError(res, error);
  } finally {
    settleUnreadBody(req, res);
  }
}

export interface Listening {
  server: Server;
  host: string;
  port: number;
  /** Where a client on this machine reaches it (a wildcard host is reached on loopback). */
  url: string;
}

/**
 * Serves on `port` of `host`, or, given `fd`, on a listening socket inherited as that descriptor (a
 * server inside a container whose socket was bound on the host's loopback before it started).
 */
export async function listen(listener: RequestListener, options: { port: number; host: string; fd?: number }): Promise<Listening> {
  const server = httpServer(listener);
  const { host } = options;
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    const ready = () => {
      server.off("error", reject);
      resolveListen();
    };
    if (options.fd === undefined) server.listen(options.port, host, ready);
    else server.listen({ fd: options.fd }, ready);
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  return { server, host, port, url: `http://${urlHost}:${port}` };
}

/** A server reached only from this process, never on a socket: each `connect` is one connection to it. */
export interface InProcessServing {
  server: Server;
  /** A new connection to the server: the client's end of an in-memory stream pair. */
  connect(): Duplex;
}

/** Serves connections made in this process alone (node:http takes any duplex stream as a connection). */
export function serveInProcess(listener: RequestListener): InProcessServing {
  const server = httpServer(listener);
  return {
    server,
    connect() {
      const [client, served] = duplexPair();
      server.emit("connection", served);
      return client;
    },
  };
}

function httpServer(listener: RequestListener): Server {
  const server = nodeHttp().createServer({ keepAliveTimeout: 65_000, noDelay: true }, listener);
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });
  return server;
}
