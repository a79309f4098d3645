/**
 * Wraps an SSE stream leaving the Durable Object so it knows when the stream is open, when data
 * flows and when it ends (finished, failed, or cancelled by the reader) — to keep the container
 * awake exactly while someone is reading.
 *
 * A reader that goes away is only noticed when the next bytes are written to it, so an idle stream
 * gets a `: keepalive` comment every `idlePingMs` (only between frames, never inside one): that
 * write fails once the reader is gone, which cancels this stream and closes the container's side.
 */
import { KEEPALIVE_FRAME } from "../../protocol/sse.ts";

export interface StreamHooks {
  onOpen(): void;
  onData(): void;
  onClose(): void;
}

const LF = 10;
const KEEPALIVE = new TextEncoder().encode(KEEPALIVE_FRAME);

export function guardStream(body: ReadableStream<Uint8Array>, hooks: StreamHooks, idlePingMs = 5_000): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let closed = false;
  let lastWrite = Date.now();
  // The last two bytes written: "\n\n" means we are between frames.
  let tail = [LF, LF];
  let timer: ReturnType<typeof setInterval> | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    if (timer !== undefined) clearInterval(timer);
    hooks.onClose();
  };
  hooks.onOpen();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(() => {
        if (closed || Date.now() - lastWrite < idlePingMs || tail[0] !== LF || tail[1] !== LF) return;
        try {
          controller.enqueue(KEEPALIVE.slice());
          lastWrite = Date.now();
        } catch {
          close();
        }
      }, idlePingMs);
    },
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          close();
          controller.close();
          return;
        }
        hooks.onData();
        if (value.length >= 2) tail = [value[value.length - 2]!, value[value.length - 1]!];
        else if (value.length === 1) tail = [tail[1]!, value[0]!];
        lastWrite = Date.now();
        controller.enqueue(value);
      } catch (error) {
        close();
        controller.error(error);
      }
    },
    async cancel(reason) {
      close();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}
