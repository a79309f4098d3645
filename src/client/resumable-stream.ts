/**
 * An SSE byte stream that survives broken connections: it forwards whole events only, remembers the
 * last event id, and when the connection drops (or ends before the final event) reopens from that
 * id with bounded, backed-off retries — then fails with SandboxConnectionError. Errors the service
 * answers with (404, 410 …) are final and pass through.
 */
import { SseParser, type SseMessage } from "../../protocol/sse.ts";
import { SandboxConnectionError, SandboxError } from "../rpc/errors.ts";

export interface RetryPolicy {
  /** Reconnect attempts in a row before giving up (default 5). */
  attempts?: number;
  /** First backoff delay; doubles per attempt (default 100 ms). */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export interface ResumableOptions {
  /** Opens the stream again after the given event id (undefined: from the start). */
  reopen(lastEventId: string | undefined): Promise<ReadableStream<Uint8Array>>;
  /** Whether this event ends the stream (after it, a closed connection is the normal end). */
  isFinal(message: SseMessage): boolean;
  /** Rewrites an event from a reopened stream (e.g. process log events into exec events); undefined drops it. */
  map?(message: SseMessage): Promise<SseMessage | undefined> | SseMessage | undefined;
  retry?: RetryPolicy;
  describe: string;
}

function frame(message: SseMessage): string {
  return `${message.id === undefined ? "" : `id: ${message.id}\n`}event: ${message.event}\ndata: ${message.data}\n\n`;
}

/** Network-level failures (retryable) as opposed to answers from the service (final). */
function isRetryable(error: unknown): boolean {
  return !(error instanceof SandboxError) || error instanceof SandboxConnectionError || error.code === "CONTAINER_UNAVAILABLE";
}

export function resumableSse(first: ReadableStream<Uint8Array>, options: ResumableOptions): ReadableStream<Uint8Array> {
  const attempts = options.retry?.attempts ?? 5;
  const baseDelay = options.retry?.baseDelayMs ?? 100;
  const maxDelay = options.retry?.maxDelayMs ?? 2_000;
  const encoder = new TextEncoder();
  let lastEventId: string | undefined;
  let finished = false;
  let reopened = false;
  let failures = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined = first.getReader();
  let decoder = new TextDecoder();
  let parser = new SseParser();
  let cancelled = false;

  async function reconnect(cause: unknown): Promise<void> {
    for (;;) {
      failures++;
      if (failures > attempts) {
        throw new SandboxConnectionError(`${options.describe}: connection lost and ${attempts} reconnects failed`, {
          cause,
          context: { lastEventId },
        });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(maxDelay, baseDelay * 2 ** (failures - 1))));
      if (cancelled) return;
      try {
        reader = (await options.reopen(lastEventId)).getReader();
        decoder = new TextDecoder();
        parser = new SseParser();
        reopened = true;
        return;
      } catch (error) {
        if (!isRetryable(error)) throw error;
        cause = error;
      }
    }
  }

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (finished) {
          await reader?.cancel().catch(() => undefined);
          controller.close();
          return;
        }
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader!.read();
        } catch (error) {
          await reconnect(error);
          continue;
        }
        if (chunk.done) {
          await reconnect(new Error("stream ended before its final event"));
          continue;
        }
        let out = "";
        for (const parsed of parser.push(decoder.decode(chunk.value, { stream: true }))) {
          const message = reopened && options.map ? await options.map(parsed) : parsed;
          if (parsed.id !== undefined) lastEventId = parsed.id;
          if (!message) continue;
          out += frame(message);
          if (options.isFinal(message)) finished = true;
        }
        if (out) {
          failures = 0;
          controller.enqueue(encoder.encode(out));
          return;
        }
      }
    },
    async cancel(reason) {
      cancelled = true;
      await reader?.cancel(reason).catch(() => undefined);
    },
  });
}
