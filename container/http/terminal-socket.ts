/**
 * The upgrade side of the server: `GET /api/terminals/:id/ws?since=<cursor>&mode=view` becomes a
 * WebSocket viewer of that terminal (container/terminals/viewer.ts), view-only when asked. Node's http server has no WebSocket
 * server of its own, so `ws` does the handshake and framing; it is loaded at the first terminal
 * socket, not at boot (it is a fifth of an idle server's memory, and most sandboxes never open one). The same secret as every other
 * request is required; anything else that asks to upgrade is refused with a plain HTTP error.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocketServer } from "ws";
import { ERROR_CODES, errorBody, type ErrorCode } from "../../protocol/errors.ts";
import { TERMINAL_ROUTES, terminalSocketQuerySchema } from "../../protocol/terminals.ts";
import { carriesSecret } from "../../server-kit/http/bearer.ts";
import { isServiceError } from "../../server-kit/service-error.ts";
import { attachViewer } from "../terminals/viewer.ts";
import type { ServerContext } from "./types.ts";

/** TERMINAL_ROUTES.socket's pattern as a matcher: the id is the one segment in place of `:id`. */
const WS_PATH = new RegExp(`^${TERMINAL_ROUTES.socket.pattern.replace(":id", "([^/]+)")}$`);

/** Another server's upgrades come first: it answers true for those it takes (the preview-port proxy). */
export type UpgradeClaim = (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export function serveTerminalSockets(server: Server, context: ServerContext, secret: string | undefined, other?: UpgradeClaim): void {
  let sockets: Promise<WebSocketServer> | undefined;
  const socketServer = () => (sockets ??= import("ws").then(({ WebSocketServer }) => new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 })));
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    try {
      if (secret !== undefined && !carriesSecret(req, secret)) return refuse(socket, "UNAUTHORIZED", "this server answers only to its secret");
      if (other?.(req, socket, head)) return;
      const url = new URL(req.url ?? "/", "http://localhost");
      const match = WS_PATH.exec(url.pathname);
      if (!match) return refuse(socket, "NOT_FOUND", `no WebSocket at ${url.pathname}`);
      const query = terminalSocketQuerySchema.safeParse(Object.fromEntries(url.searchParams));
      if (!query.success) return refuse(socket, "INVALID_REQUEST", 'since must be a cursor (a whole number, 0 or more), mode "interactive" or "view"');
      const terminal = context.terminals.get(decodeURIComponent(match[1]!));
      const { since, mode } = query.data;
      socketServer().then(
        (wss) => wss.handleUpgrade(req, socket, head, (ws) => attachViewer(ws, terminal, since, context.shutdown, mode)),
        (error: Error) => refuse(socket, "INTERNAL_ERROR", error.message),
      );
    } catch (error) {
      if (isServiceError(error)) return refuse(socket, error.code, error.message);
      refuse(socket, "INTERNAL_ERROR", (error as Error).message);
    }
  });
}

function refuse(socket: Duplex, code: ErrorCode, message: string): void {
  const body = JSON.stringify(errorBody(code, message));
  const status = ERROR_CODES[code];
  socket.end(`HTTP/1.1 ${status} ${code}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}
