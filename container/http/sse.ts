/**
 * Streams a process log to one SSE client at the client's pace: take a batch from the reader, write
 * it, wait for the socket to drain, repeat. Nothing is queued for a slow client beyond one batch.
 * Idle streams get a keepalive comment. Resolves with how the stream ended.
 */
import { KEEPALIVE_FRAME, SSE_HEADERS } from "../../protocol/sse.ts";
import type { LogReader } from "../engine/log-reader.ts";
import type { Framer } from "./sse-frames.ts";
import type { RequestContext } from "./types.ts";

/** Output bytes per write; big enough to amortise syscalls, small enough to bound memory per client. */
const BATCH_BYTES = 256 * 1024;

export type StreamEnd = "complete" | "disconnected";

export async function streamLogAsSse(
  ctx: RequestContext,
  reader: LogReader,
  frame: Framer,
): Promise<StreamEnd> {
  const { res } = ctx;
  const stop = new AbortController();
  const onClose = () => stop.abort();
  res.on("close", onClose);
  ctx.server.shutdown.addEventListener("abort", onClose);
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();

  // A keepalive goes out whenever the stream has been silent for keepaliveMs; every write resets it.
  const keepalive = setTimeout(function beat() {
    if (!res.writableNeedDrain) res.write(KEEPALIVE_FRAME);
    keepalive.refresh();
  }, ctx.server.limits.keepaliveMs);

  try {
    while (!stop.signal.aborted) {
      const items = reader.take(BATCH_BYTES);
      if (items.length > 0) {
        const parts: Buffer[] = [];
        for (const item of items) frame(item, parts);
        keepalive.refresh();
        if (!writeParts(res, parts)) await drained(ctx, stop.signal);
        continue;
      }
      if (reader.done) break;
      await reader.wait(stop.signal);
    }
  } finally {
    clearTimeout(keepalive);
    res.off("close", onClose);
    ctx.server.shutdown.removeEventListener("abort", onClose);
  }
  if (stop.signal.aborted) {
    if (!res.writableEnded) res.destroy();
    return "disconnected";
  }
  res.end();
  return "complete";
}

/** Output bytes at least this large are written as they are; smaller pieces are joined first. */
const ZERO_COPY_BYTES = 16 * 1024;

/**
 * Writes the pieces of a batch: large pieces (raw output) without copying, runs of small ones (frame
 * headers, escapes) joined. Node's http layer corks the socket for the rest of the tick by itself, so
 * the whole batch leaves in one writev (an explicit res.cork() defeats that).
 */
function writeParts(res: RequestContext["res"], parts: Buffer[]): boolean {
  let ok = true;
  let run: Buffer[] = [];
  const flushRun = () => {
    if (run.length === 0) return;
    ok = res.write(run.length === 1 ? run[0]! : Buffer.concat(run)) && ok;
    run = [];
  };
  for (const part of parts) {
    if (part.length < ZERO_COPY_BYTES) {
      run.push(part);
      continue;
    }
    flushRun();
    ok = res.write(part) && ok;
  }
  flushRun();
  return ok;
}

/**
 * Waits until the socket has flushed. Watches the socket itself, not the response: a corked batch
 * can drain synchronously inside uncork(), before a 'drain' listener on the response could see it.
 */
function drained(ctx: RequestContext, signal: AbortSignal): Promise<void> {
  const socket = ctx.res.socket;
  if (!socket || !socket.writableNeedDrain || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      socket.off("drain", done);
      socket.off("close", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    socket.once("drain", done);
    socket.once("close", done);
    signal.addEventListener("abort", done, { once: true });
  });
}
