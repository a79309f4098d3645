/**
 * Hands a container stream on to the caller while the Durable Object keeps count of open streams
 * (an open stream keeps the container awake, even when no bytes flow), and says so when the
 * container goes away under it.
 *
 * The bytes go through an IdentityTransformStream with pipeTo, which workerd runs natively: no
 * JavaScript per chunk, so a stream costs the same CPU with or without the count. The pipe ends
 * when the container finishes the stream, or when the reader goes away — noticed at the next write,
 * which comes at the latest with the container's keepalive comment (LIMITS.keepaliveMs on idle
 * streams); then the container's side is cancelled too (closing its connection: an exec then waits
 * for its reader to come back, or with `killOnDisconnect` is killed).
 *
 * When the container's side breaks (the container server ends its streams itself only when they
 * are done, and breaks them when it stops), the guard asks whether the container is still the one
 * the stream came from. If it is gone, an event stream ends with a coded `error` event (protocol
 * `streamEndEvent`) instead of a body that just stops; if it is still there, the break is passed on
 * as a break, which clients resume from their resume point.
 */
import { streamEndEvent } from "../../protocol/events.ts";
import { formatSseEvent } from "../../protocol/sse.ts";

export interface StreamHooks {
  onOpen(): void;
  onClose(): void;
  /**
   * Whether the container this stream came from has stopped, asked when its side broke. Event
   * streams only: without it (a file's raw bytes) a break is always passed on as a break.
   */
  containerGone?(): Promise<boolean>;
}

const GONE_MESSAGE = "the sandbox's container stopped while the stream was open (destroyed, or it crashed); what it followed is gone";

export function guardStream(body: ReadableStream<Uint8Array>, hooks: StreamHooks): ReadableStream<Uint8Array> {
  const { readable, writable } = new IdentityTransformStream();
  hooks.onOpen();
  void relay(body, writable, hooks).finally(() => hooks.onClose());
  return readable;
}

async function relay(body: ReadableStream<Uint8Array>, writable: WritableStream<Uint8Array>, hooks: StreamHooks): Promise<void> {
  let broken: unknown;
  try {
    await body.pipeTo(writable, { preventClose: true, preventAbort: true });
  } catch (error) {
    // The container's side broke, or the reader went away (then every write below fails: fine).
    broken = error ?? new Error("stream broke");
  }
  const writer = writable.getWriter();
  try {
    // An errored writable means the reader went away: nobody is left to tell.
    const readerGone = writer.desiredSize === null;
    if (broken !== undefined && !readerGone && hooks.containerGone && (await hooks.containerGone())) {
      await writer.write(new TextEncoder().encode(formatSseEvent(streamEndEvent("CONTAINER_UNAVAILABLE", GONE_MESSAGE))));
      await writer.close();
    } else if (broken === undefined) {
      await writer.close();
    } else {
      await writer.abort(broken);
    }
  } catch {
    // The reader went away meanwhile.
  }
}
