/**
 * An event stream that survives broken connections, over Workers RPC and HTTP alike: it remembers
 * the last event id, and when the connection drops (or ends before the final event) reopens the
 * stream after that id with bounded, backed-off retries — then fails with SandboxConnectionError.
 * Errors the service answers with (404, 410 …) are final and pass through, and so is a stream that
 * ends with the coded error event saying its container stopped (raised as a SandboxError with that
 * code). Events are read with the protocol's SSE reader; an AbortSignal ends the iteration with its
 * reason and is never retried.
 */
import { isStreamEnd, type StreamEndEvent } from "../../protocol/events.ts";
import { readSseStream } from "../../protocol/sse.ts";
import { errorFromCode, SandboxConnectionError, SandboxError } from "../rpc/errors.ts";

export interface RetryPolicy {
  /** Reconnect attempts in a row before giving up (default 5). */
  attempts?: number;
  /** First backoff delay; doubles per attempt (default 100 ms). */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export interface ResumableOptions<T> {
  /** Opens the stream again after the given event id (undefined: from where the first one started). */
  reopen(since: number | undefined): Promise<ReadableStream<Uint8Array>>;
  /** Whether this event ends the stream (after it, a closed connection is the normal end). */
  isFinal(event: T): boolean;
  retry?: RetryPolicy;
  signal?: AbortSignal;
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
  let stream = first;
  let lastEventId: number | undefined;
  let failures = 0;
  for (;;) {
    let cause: unknown;
    let end: StreamEndEvent | undefined;
    try {
      for await (const message of readSseStream(stream, signal)) {
        if (message.id !== undefined) lastEventId = Number(message.id);
        failures = 0;
        const event = parseEvent<T>(message.data);
        if (isStreamEnd(event as { type?: unknown })) {
          end = event as StreamEndEvent;
          break;
        }
        yield event;
        if (options.isFinal(event)) return;
      }
      cause = new Error("stream ended before its final event");
    } catch (error) {
      signal?.throwIfAborted();
      if (!isRetryable(error)) throw error;
      cause = error;
    }
    // The stream said why it cannot go on (its container stopped): final, never retried.
    if (end) throw errorFromCode(end.code, `${options.describe}: ${end.error}`, { context: { lastEventId } });
    // Reconnect: bounded attempts in a row, each after a doubling delay.
    for (;;) {
      failures++;
      if (failures > attempts) {
        throw new SandboxConnectionError(`${options.describe}: connection lost and ${attempts} reconnects failed`, {
          cause,
          context: { lastEventId },
        });
      }
      await delay(Math.min(maxDelay, baseDelay * 2 ** (failures - 1)), signal);
      try {
        stream = await options.reopen(lastEventId);
        break;
      } catch (error) {
        if (!isRetryable(error)) throw error;
        cause = error;
      }
    }
  }
}
