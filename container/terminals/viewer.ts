/**
 * One viewer of a terminal over a WebSocket: the log from a cursor on as binary frames (each batch
 * followed by a `cursor` text frame, the seq to reconnect with), a `truncated` frame when output it
 * asked for is no longer kept, `ready` once that backlog is sent, and `exit` once the program has
 * ended and everything was sent. Binary
 * frames from the viewer are input; a `resize` text frame resizes. A view-only viewer sends neither:
 * each such frame is refused with an `error` frame (TERMINAL_VIEW_ONLY) and has no effect. Closing a
 * viewer never touches the terminal.
 */
import type { WebSocket } from "ws";
import { terminalClientFrameSchema, type TerminalServerFrame, type TerminalSocketMode } from "../../protocol/terminals.ts";
import type { Terminal } from "./terminal.ts";

/** Bytes read from the log per batch. */
const BATCH_BYTES = 64 * 1024;
/** Sending waits while this much is queued on the socket, so a slow viewer does not pile up memory. */
const MAX_QUEUED_BYTES = 1024 * 1024;

export function attachViewer(socket: WebSocket, terminal: Terminal, since: number, shutdown: AbortSignal, mode: TerminalSocketMode = "interactive"): void {
  const stop = new AbortController();
  const onShutdown = () => socket.close(1001, "server shutting down");
  shutdown.addEventListener("abort", onShutdown, { once: true });
  socket.on("close", () => {
    stop.abort();
    shutdown.removeEventListener("abort", onShutdown);
  });
  socket.on("message", (data, isBinary) => {
    if (mode === "view") {
      const frame: TerminalServerFrame = { type: "error", code: "TERMINAL_VIEW_ONLY", message: "this socket is view-only: input and resizes are not taken" };
      socket.send(JSON.stringify(frame));
      return;
    }
    try {
      if (isBinary) {
        terminal.write(Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]));
        return;
      }
      const frame = terminalClientFrameSchema.parse(JSON.parse(String(data)));
      terminal.resize(frame.cols, frame.rows);
    } catch (error) {
      // Input after the exit or a malformed frame: said on the socket, which stays open to read output.
      const frame: TerminalServerFrame = { type: "error", message: (error as Error).message };
      socket.send(JSON.stringify(frame));
    }
  });
  void pump(socket, terminal, since, stop.signal);
}

async function pump(socket: WebSocket, terminal: Terminal, since: number, signal: AbortSignal): Promise<void> {
  const send = (frame: TerminalServerFrame) => socket.send(JSON.stringify(frame));
  let cursor = since;
  let ready = false;
  while (!signal.aborted) {
    const { notice, entries } = terminal.log.read(cursor, BATCH_BYTES);
    if (notice) send({ type: "truncated", droppedBytes: notice.droppedBytes });
    for (const entry of entries) {
      if (entry.kind === "output") socket.send(entry.data, { binary: true });
      cursor = entry.seq;
    }
    if (entries.length > 0) send({ type: "cursor", cursor });
    // Caught up with what was asked for: said once, as Cloudflare's terminals say it.
    if (entries.length === 0 && !ready) {
      ready = true;
      send({ type: "ready" });
    }
    if (entries.length === 0 && terminal.log.closed) {
      const exit = terminal.exit ?? {};
      send({ type: "exit", ...exit, cursor });
      socket.close(1000, "exited");
      return;
    }
    while (socket.bufferedAmount > MAX_QUEUED_BYTES && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, 10));
    if (entries.length === 0) await terminal.log.waitFor(cursor, signal);
  }
}
