/**
 * Streams a process log to one SSE client at the client's pace: take a batch from the reader, write
 * it, wait for the socket to drain, repeat. Nothing is queued for a slow client beyond one batch.
 * Resolves with how the stream ended.
 *
 * A keepalive comment goes out with the headers, then whenever the stream has been silent for
 * `keepaliveMs`: a proxy that cuts connections idle for a few seconds (or that waits for the first
 * body byte) never sees a healthy stream go quiet, however long the command stays silent.
 *
 * A batch is written as one buffer. The buffers are reused once the socket is done with them, so a
 * long stream does not allocate (and the garbage collector does not chase) a new buffer per batch.
 */
import { KEEPALIVE_FRAME, SSE_HEADERS } from "../../../protocol/sse.ts";
import type { LogReader } from "../../engine/log-reader.ts";
import type { Framer } from "./sse-frames.ts";
import type { RequestContext } from "../types.ts";

/** Output bytes per write; big enough to amortise syscalls, small enough to bound memory per client. */
const BATCH_BYTES = 256 * 1024;
/** Room for a batch and its framing (bigger batches, e.g. of escaped control bytes, get a buffer of their own size). */
const BATCH_BUFFER_BYTES = BATCH_BYTES + 32 * 1024;
/** Batch buffers kept per stream for reuse: one being filled, the rest in flight. */
const SPARE_BUFFERS = 3;

export type StreamEnd = "complete" | "disconnected";

/** Buffers handed back by the socket once written, for the next batches of the same stream. */
class BatchBuffers {
  readonly #spare: Buffer[] = [];

  take(size: number): Buffer {
    const index = this.#spare.findIndex((buffer) => buffer.length >= size);
    if (index !== -1) return this.#spare.splice(index, 1)[0]!;
    return Buffer.allocUnsafeSlow(Math.max(size, BATCH_BUFFER_BYTES));
  }

  give(buffer: Buffer): void {
    if (this.#spare.length < SPARE_BUFFERS) this.#spare.push(buffer);
  }
}

export async function streamLogAsSse(
  ctx: RequestContext,
  reader: LogReader,
  frame: Framer,
  keepaliveMs = ctx.server.limits.keepaliveMs,
): Promise<StreamEnd> {
  const { res } = ctx;
  const stop = new AbortController();
  const onClose = () => stop.abort();
  res.on("close", onClose);
  ctx.server.shutdown.addEventListener("abort", onClose);
  res.writeHead(200, SSE_HEADERS);
  res.write(KEEPALIVE_FRAME);

  // Every write resets the keepalive.
  const keepalive = setTimeout(function beat() {
    if (!res.writableNeedDrain) res.write(KEEPALIVE_FRAME);
    keepalive.refresh();
  }, keepaliveMs);

  const buffers = new BatchBuffers();
  try {
    while (!stop.signal.aborted) {
      const items = reader.take(BATCH_BYTES);
      if (items.length > 0) {
        const frames = items.map(frame);
        let size = 0;
        for (const item of frames) size += item.byteLength;
        const buffer = buffers.take(size);
        let end = 0;
        for (const item of frames) end = item.writeTo(buffer, end);
        keepalive.refresh();
        // The callback runs once the socket has written the bytes (or failed to): then the buffer is free.
        if (!res.write(buffer.subarray(0, end), () => buffers.give(buffer))) await drained(ctx, stop.signal);
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
