/**
 * An event stream that survives broken connections, over Workers RPC and HTTP alike. It keeps a
 * cursor (protocol/resume.ts: the last whole event's id and each stream's byte position), and when
 * the connection drops — or the stream ends before its final event — it reopens the stream there.
 *
 * Resuming is exact to the byte: an output event cut in the middle is not dropped and resent, its
 * part that came is handed on at once (protocol/partial-event.ts) and the stream resumes from the
 * byte after it, so the two parts carry the same id and their data joins without a gap or overlap.
 * That way every connection that delivers anything makes progress, however short-lived.
 *
 * Reconnects are bounded: a reconnect that fails counts against `attempts` (with a doubling delay),
 * one that succeeds resets the count — a proxy that cuts idle connections is survived for as long as
 * it keeps letting new ones through. Past the budget: SandboxConnectionError (as when the service,
 * `attempts` times in a row, ends the stream cleanly without a single event: it has no more). Errors the service
 * answers with (404, 410 …) are final and pass through, and so is a stream that ends with the coded
 * error event saying its container stopped (raised as a SandboxError with that code). An
 * AbortSignal ends the iteration with its reason and is never retried.
 */
import { isStreamEnd, type StreamEndEvent } from "../../protocol/events.ts";
import { partialOutputEvent } from "../../protocol/partial-event.ts";
import { ResumeCursor, type ResumePoint } from "../../protocol/resume.ts";
import { readSseStream, SseParser } from "../../protocol/sse.ts";
import { errorFromCode, SandboxConnectionError, SandboxError } from "./errors.ts";

export interface RetryPolicy {
  /** Failed reconnect attempts in a row before giving up (default 5). */
  attempts?: number;
  /** First backoff delay; doubles per failed attempt (default 100 ms). */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export interface ResumableOptions<T> {
  /** Opens the stream again from a resume point. */
  reopen(point: ResumePoint): Promise<ReadableStream<Uint8Array>>;
  /** Whether this event ends the stream (after it, a closed connection is the normal end). */
  isFinal(event: T): boolean;
  /** Where the stream stands; it moves as events arrive (default: from the first event). */
  cursor?: ResumeCursor;
  retry?: RetryPolicy | undefined;
  signal?: AbortSignal | undefined;
  /** What the stream is, for the error that gives up. */
  describe: string;
}

/** Network-level failures (retryable) as opposed to answers from the service (final). */
function isRetryable(error: unknown): boolean {
  return !(error instanceof SandboxError) || error instanceof SandboxConnectionError || error.code === "CONTAINER_UNAVAILABLE";
}

/** An event's JSON; a malformed one is the service's fault, not the connection's, and is not retried. */
function parseEvent<T>(data: string): T {
  try {
    return JSON.parse(data) as T;
  } catch (error) {
    throw new SandboxError(`Malformed event in a stream: ${data.slice(0, 200)}`, "INTERNAL_ERROR", { cause: error });
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The JSON events of `first`, and after a break those of the stream `reopen` gives, as one sequence. */
export async function* resumableEvents<T>(first: ReadableStream<Uint8Array>, options: ResumableOptions<T>): AsyncGenerator<T> {
  const { signal } = options;
  const attempts = options.retry?.attempts ?? 5;
  const baseDelay = options.retry?.baseDelayMs ?? 100;
  const maxDelay = options.retry?.maxDelayMs ?? 2_000;
  const cursor = options.cursor ?? new ResumeCursor();
  let stream = first;
  let failures = 0;
  // Streams the service ended cleanly without a single event, in a row: it has nothing more to say.
  let emptyEnds = 0;
  for (;;) {
    let cause: unknown;
    const parser = new SseParser();
    let events = 0;
    let end: StreamEndEvent | undefined;
    try {
      for await (const message of readSseStream(stream, signal, parser)) {
        events++;
        const event = parseEvent<T>(message.data);
        if (isStreamEnd(event as { type?: unknown })) {
          end = event as StreamEndEvent;
          break;
        }
        cursor.passed(event as Parameters<ResumeCursor["passed"]>[0]);
        yield event;
        if (options.isFinal(event)) return;
      }
      cause = new Error("stream ended before its final event");
      emptyEnds = events === 0 ? emptyEnds + 1 : 0;
    } catch (error) {
      signal?.throwIfAborted();
      if (!isRetryable(error)) throw error;
      cause = error;
      emptyEnds = 0;
    }
    // The stream said why it cannot go on (its container stopped): final, never retried.
    if (end) throw errorFromCode(end.code, `${options.describe}: ${end.error}`, { context: { ...cursor.point } });
    if (emptyEnds > attempts) {
      throw new SandboxConnectionError(`${options.describe}: the stream ends again and again without its final event`, { cause, context: { ...cursor.point } });
    }
    // The part of an output event that came before the break is the reader's already.
    const cut = parser.partial();
    const part = cut ? partialOutputEvent(cut.data) : undefined;
    if (part && part.byteLength > 0) {
      const { byteLength: _bytes, ...event } = part;
      cursor.passedPart(part);
      yield event as T;
    }
    // Reconnect: bounded failed attempts in a row, each after a doubling delay.
    for (;;) {
      failures++;
      if (failures > attempts) {
        throw new SandboxConnectionError(`${options.describe}: connection lost and ${attempts} reconnects failed`, {
          cause,
          context: { ...cursor.point },
        });
      }
      await delay(Math.min(maxDelay, baseDelay * 2 ** (failures - 1)), signal);
      try {
        stream = await options.reopen(cursor.point);
        failures = 0;
        break;
      } catch (error) {
        if (!isRetryable(error)) throw error;
        cause = error;
      }
    }
  }
}
