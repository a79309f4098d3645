/**
 * A request's raw body passed on to the sandbox, and what the sandbox did not read of it read to its
 * end before the Worker answers. The container answers a refused upload (a bad archive) before the
 * body has all arrived, and stops reading it. Answered so, the request ends with its body half read,
 * and a proxy in front of the Worker (wrangler's dev server, under `npm start`) then fails the whole
 * exchange, "Network connection lost", 500, the coded answer lost with it. So after the call, the
 * rest is read and thrown away, within LIMITS.refusedUploadDrainMs and the streamed-file cap (past
 * either the answer goes as it is).
 */
import { FILE_LIMITS } from "../../protocol/files.ts";
import { LIMITS } from "../../protocol/limits.ts";

export interface UploadRelay {
  /** What the sandbox reads. */
  readable: ReadableStream<Uint8Array>;
  /** Reads on what the sandbox left. */
  drainRest(): Promise<void>;
}

export function uploadRelay(body: ReadableStream<Uint8Array>): UploadRelay {
  const reader = body.getReader();
  const readable = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      // The sandbox stopped reading: drainRest() reads on.
      cancel() {},
    },
    { highWaterMark: 0 },
  );
  const drainRest = async () => {
    const started = Date.now();
    let bytes = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        bytes += value.byteLength;
        if (bytes > FILE_LIMITS.maxStreamedFileBytes || Date.now() - started > LIMITS.refusedUploadDrainMs) {
          await reader.cancel();
          return;
        }
      }
    } catch {
      // The caller went away: nothing left to read.
    }
  };
  return { readable, drainRest };
}

/** `call` with the request's body; whatever it leaves unread is read before its answer or error goes back. */
export async function withWholeBody<T>(body: ReadableStream<Uint8Array>, call: (body: ReadableStream<Uint8Array>) => Promise<T>): Promise<T> {
  const relay = uploadRelay(body);
  try {
    return await call(relay.readable);
  } finally {
    await relay.drainRest();
  }
}
