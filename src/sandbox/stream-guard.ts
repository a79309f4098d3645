/**
 * Hands a container stream on to the caller while the Durable Object keeps count of open streams
 * (an open stream keeps the container awake, even when no bytes flow).
 *
 * The bytes go through an IdentityTransformStream with pipeTo, which workerd runs natively: no
 * JavaScript per chunk, so a stream costs the same CPU with or without the count. The pipe ends
 * when the container finishes the stream, or when the reader goes away — noticed at the next write,
 * which comes at the latest with the container's keepalive comment (LIMITS.keepaliveMs on idle
 * streams); then the container's side is cancelled too (closing its connection: an exec then waits
 * for its reader to come back, or with `killOnDisconnect` is killed).
 */
export interface StreamHooks {
  onOpen(): void;
  onClose(): void;
}

export function guardStream(body: ReadableStream<Uint8Array>, hooks: StreamHooks): ReadableStream<Uint8Array> {
  const { readable, writable } = new IdentityTransformStream();
  hooks.onOpen();
  body
    .pipeTo(writable)
    .catch(() => undefined)
    .finally(() => hooks.onClose());
  return readable;
}
