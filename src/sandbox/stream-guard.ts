/**
 * Wraps a stream leaving the Durable Object so it knows when the stream is open, when data flows
 * and when it ends (finished, failed, or cancelled by the reader) — to keep the container awake
 * exactly while someone is reading.
 */
export interface StreamHooks {
  onOpen(): void;
  onData(): void;
  onClose(): void;
}

export function guardStream(body: ReadableStream<Uint8Array>, hooks: StreamHooks): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    hooks.onClose();
  };
  hooks.onOpen();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          close();
          controller.close();
          return;
        }
        hooks.onData();
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
