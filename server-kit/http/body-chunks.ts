/**
 * A request's body as an async iterator of its chunks, read from the request's 'data' events.
 *
 * Why not the request's own async iterator: that one pulls with `read()` after each 'readable'
 * event and yields through an async generator, several ticks and a copy of whatever was buffered
 * per chunk; a large upload arrives in ~64 KiB chunks, and that machinery cost a server receiving one
 * about 40% more CPU than the bytes' 'data' events alone. Here the request flows until the chunks not
 * yet taken reach its high-water mark, then pauses until they are taken (so a slow reader holds the
 * socket back, as before).
 *
 * A reader that stops early (`return()`, or a `for await` left by a throw) leaves the request
 * paused and not destroyed, so the rest of the body can be drained and the connection kept
 * (unread-body.ts). A client that goes away mid-body ends the iteration with an error.
 */
import type { IncomingMessage } from "node:http";

export function bodyChunks(req: IncomingMessage): AsyncIterableIterator<Buffer> {
  const queue: Buffer[] = [];
  const limit = req.readableHighWaterMark;
  let queued = 0;
  let pausedHere = false;
  let ended = req.readableEnded;
  let stopped = false;
  let failure: Error | undefined = req.destroyed && !ended ? aborted() : undefined;
  let wake: (() => void) | undefined;

  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= limit && !pausedHere) {
      pausedHere = true;
      req.pause();
    }
    notify();
  };
  const onEnd = () => {
    ended = true;
    detach();
    notify();
  };
  const onError = (error: Error) => {
    failure ??= error;
    detach();
    notify();
  };
  // A request closed before its end: the client went away (node:http emits 'error' only to those
  // listening for it, and not always before 'close').
  const onClose = () => {
    if (!ended) failure ??= aborted();
    detach();
    notify();
  };
  const detach = () => {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    req.off("close", onClose);
  };

  if (!ended && failure === undefined) {
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  }

  return {
    async next(): Promise<IteratorResult<Buffer>> {
      for (;;) {
        const chunk = queue.shift();
        if (chunk !== undefined) {
          queued -= chunk.length;
          if (pausedHere && queued < limit && !stopped) {
            pausedHere = false;
            req.resume();
          }
          return { value: chunk, done: false };
        }
        if (failure !== undefined && !stopped) throw failure;
        if (ended || stopped) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    async return(): Promise<IteratorResult<Buffer>> {
      if (!stopped) {
        stopped = true;
        detach();
        queue.length = 0;
        if (!ended) req.pause();
        notify();
      }
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

function aborted(): Error {
  return Object.assign(new Error("aborted"), { code: "ECONNRESET" });
}
