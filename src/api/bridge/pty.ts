/**
 * The Bridge's terminal, `GET /v1/sandbox/:id/pty?cols=&rows=&shell=&session=` (WebSocket), served by
 * our terminals. One terminal per Bridge session (the `session` query or `Session-Id` header; none:
 * the default one) outlives its connections: a reconnect gets the retained output again, as the
 * Bridge promises. The Worker relays frames between the caller and the terminal's own socket,
 * restating our control frames in the Bridge's words: `ready` on open, `exit {code, signal}`,
 * `error {message}`; binary frames (output, input) and the `resize` frame are the same on both sides.
 */
import { Hono } from "hono";
import { InvalidRequestError, SandboxError } from "../../rpc/errors.ts";
import type { TerminalServerFrame } from "../../../protocol/terminals.ts";
import type { SandboxRpc } from "../../rpc/sandbox-rpc.ts";
import type { ApiEnv } from "../types.ts";
import { sessionHeader, SESSION_HEADER } from "./sessions.ts";

const DEFAULT_SIZE = { cols: 80, rows: 24 };

function size(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidRequestError(`${name} must be a whole number from 1 to 1000`, "INVALID_REQUEST");
  return n;
}

/** The terminal of a Bridge session: the running one, else a new one under that name. */
async function sessionTerminal(sandbox: SandboxRpc, session: string | undefined, options: { cols: number; rows: number; shell?: string }): Promise<string> {
  const terminalId = `bridge-pty-${session ?? "default"}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  try {
    const existing = await sandbox.getTerminal(terminalId);
    if (existing.status === "running") {
      if (existing.cols !== options.cols || existing.rows !== options.rows) await sandbox.resizeTerminal(terminalId, options.cols, options.rows);
      return terminalId;
    }
    await sandbox.deleteTerminal(terminalId);
  } catch (error) {
    if (!(error instanceof SandboxError && error.code === "TERMINAL_NOT_FOUND")) throw error;
  }
  await sandbox.createTerminal({
    terminalId,
    cols: options.cols,
    rows: options.rows,
    ...(options.shell === undefined ? {} : { command: options.shell }),
    ...(session === undefined ? {} : { sessionId: session }),
  });
  return terminalId;
}

/** Our text frame in the Bridge's words (undefined: nothing to tell a Bridge client). */
function bridgeFrame(text: string): string | undefined {
  let frame: TerminalServerFrame;
  try {
    frame = JSON.parse(text) as TerminalServerFrame;
  } catch {
    return undefined;
  }
  if (frame.type === "exit") return JSON.stringify({ type: "exit", code: frame.exitCode ?? null, ...(frame.signal ? { signal: frame.signal } : {}) });
  if (frame.type === "error") return JSON.stringify({ type: "error", message: frame.message });
  return undefined;
}

export const bridgePtyRoutes = new Hono<ApiEnv>().get("/pty", async (c) => {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") throw new InvalidRequestError("this route is a WebSocket: send Upgrade: websocket", "INVALID_REQUEST");
  const cols = size(c.req.query("cols"), DEFAULT_SIZE.cols, "cols");
  const rows = size(c.req.query("rows"), DEFAULT_SIZE.rows, "rows");
  const session = sessionHeader(c.req.query("session") ?? c.req.header(SESSION_HEADER));
  const shell = c.req.query("shell") || undefined;
  const terminalId = await sessionTerminal(c.var.sandbox, session, { cols, rows, ...(shell === undefined ? {} : { shell }) });

  const upgrade = new Request(`${new URL(c.req.url).origin}/terminal?since=0`, { headers: { upgrade: "websocket" } });
  const upstream = (await c.var.sandbox.connectTerminal(terminalId, upgrade)).webSocket;
  if (!upstream) throw new SandboxError("the terminal did not accept a WebSocket", "INTERNAL_ERROR");
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  // Binary frames as ArrayBuffers, handed on in order as they come (a Blob would need an await).
  for (const socket of [upstream, server]) {
    socket.binaryType = "arraybuffer";
    socket.accept();
  }
  server.send(JSON.stringify({ type: "ready" }));

  upstream.addEventListener("message", (event) => {
    if (typeof event.data !== "string") return server.send(event.data);
    const frame = bridgeFrame(event.data);
    if (frame !== undefined) server.send(frame);
  });
  server.addEventListener("message", (event) => upstream.send(event.data));
  // Closing one side closes the other; the terminal itself lives on.
  const closeBoth = (code = 1000, reason = "") => {
    for (const socket of [server, upstream]) {
      try {
        socket.close(code === 1005 || code === 1006 ? 1000 : code, reason);
      } catch {
        // already closed
      }
    }
  };
  upstream.addEventListener("close", (event) => closeBoth(event.code, event.reason));
  server.addEventListener("close", (event) => closeBoth(event.code, event.reason));
  upstream.addEventListener("error", () => closeBoth(1011, "terminal connection failed"));
  server.addEventListener("error", () => closeBoth(1011, "client connection failed"));
  return new Response(null, { status: 101, webSocket: client });
});
