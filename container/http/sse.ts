/**
 * Streams a process log to one SSE client at the client's pace: take a batch from the reader, write
 * it, wait for the socket to drain, repeat. Nothing is queued for a slow client beyond one batch.
 * Idle streams get a keepalive comment. Resolves with how the stream ended.
 */
import { formatSseEvent, KEEPALIVE_FRAME, SSE_HEADERS } from "../../protocol/sse.ts";
import type { LogItem, LogReader } from "../engine/log-reader.ts";
import type { RequestContext } from "./types.ts";

/** Output bytes per write; big enough to amortise syscalls, small enough to bound memory per client. */
const BATCH_BYTES = 256 * 1024;

export type StreamEnd = "complete" | "disconnected";

export async function streamLogAsSse(
  ctx: RequestContext,
  reader: LogReader,
  render: (item: LogItem) => { type: string; seq?: number },
): Promise<StreamEnd> {
  const { res } = ctx;
  const stop = new AbortController();
  const onClose = () => stop.abort();
  res.on("close", onClose);
  ctx.server.shutdown.addEventListener("abort", onClose);
  res.writeHead(200, SSE_HEADERS);
  res.flushHeaders();

  let lastWrite = Date.now();
  const keepaliveMs = ctx.server.limits.keepaliveMs;
  const keepalive = setInterval(() => {
    if (Date.now() - lastWrite < keepaliveMs / 2 || res.writableNeedDrain) return;
    res.write(KEEPALIVE_FRAME);
    lastWrite = Date.now();
  }, keepaliveMs);

  try {
    while (!stop.signal.aborted) {
      const items = reader.take(BATCH_BYTES);
      if (items.length > 0) {
        let frames = "";
        for (const item of items) frames += formatSseEvent(render(item));
        lastWrite = Date.now();
        if (!res.write(frames)) await drained(ctx, stop.signal);
        continue;
      }
      if (reader.done) break;
      await reader.wait(stop.signal);
    }
  } finally {
    clearInterval(keepalive);
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

function drained(ctx: RequestContext, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      ctx.res.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    ctx.res.once("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}
