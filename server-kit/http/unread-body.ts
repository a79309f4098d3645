/**
 * What becomes of a request body the handler did not read to its end (an upload refused midway, a
 * body answered before it was read). Left as it is, its connection stays open with bytes still in
 * it: the client, still sending, never frees the connection, and the next call queued behind it
 * waits for the keep-alive timeout. So such an answer says `connection: close`, the rest of the body
 * is read and thrown away (at most LIMITS.refusedBodyDrainBytes), and the connection is closed
 * gently: our side first, reading on for LIMITS.refusedBodyDrainMs, so the client reads the answer
 * rather than a reset that would swallow it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { LIMITS } from "../../protocol/limits.ts";

export interface DrainLimits {
  bytes: number;
  ms: number;
}

const DEFAULT_DRAIN: DrainLimits = { bytes: LIMITS.refusedBodyDrainBytes, ms: LIMITS.refusedBodyDrainMs };
const settled = new WeakSet<IncomingMessage>();

/**
 * Call before answering a request whose body may be unread (so the answer can say it closes), and
 * once the handler is done; does nothing when the body was read to its end.
 */
export function settleUnreadBody(req: IncomingMessage, res: ServerResponse, limits: DrainLimits = DEFAULT_DRAIN): void {
  const socket = req.socket as (Socket & { destroySoon?: () => void }) | null;
  if (req.complete || socket === null || socket.destroyed || settled.has(req)) return;
  settled.add(req);

  const lingeringClose = () => {
    if (socket.destroyed) return;
    socket.end();
    const timer = setTimeout(() => socket.destroy(), limits.ms);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
  };
  const closeAfterAnswer = () => {
    if (res.writableFinished) lingeringClose();
    else res.once("finish", lingeringClose);
  };
  if (!res.headersSent) {
    // The answer says it closes, so the client never sends another request on this connection.
    res.setHeader("connection", "close");
    // node:http ends a `connection: close` socket with destroySoon, which resets it while the client still sends.
    socket.destroySoon = lingeringClose;
  }
  const closesAnyway = !res.headersSent || res.getHeader("connection") === "close";
  if (req.destroyed) {
    if (!closesAnyway) closeAfterAnswer();
    return;
  }
  // An answer already out as kept-alive: the connection carries on once the body is drained, and is
  // closed only if it is not drained within the limits.
  const timer = setTimeout(() => {
    stop();
    if (!closesAnyway) closeAfterAnswer();
  }, limits.ms);
  timer.unref();
  let drained = 0;
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained <= limits.bytes) return;
    stop();
    if (!closesAnyway) closeAfterAnswer();
  };
  const stop = () => {
    clearTimeout(timer);
    req.off("data", onData);
    req.off("end", stop);
    req.pause();
  };
  req.on("data", onData);
  req.once("end", stop);
  req.resume();
}
