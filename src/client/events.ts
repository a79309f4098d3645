/**
 * SSE bytes → typed events for the caller, with clean cancellation: an AbortSignal or a `break`
 * cancels the underlying stream (which, across RPC, cancels it in the Durable Object and closes the
 * container's connection).
 */
import { SseParser } from "../../protocol/sse.ts";

export async function* sseEvents<T>(stream: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<T> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => undefined);
  if (signal?.aborted) {
    onAbort();
    throw signal.reason;
  }
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (signal?.aborted) throw signal.reason;
      if (done) break;
      for (const message of parser.push(decoder.decode(value, { stream: true }))) {
        yield JSON.parse(message.data) as T;
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => undefined);
  }
}

/** Text of an output event, decoding base64 output to UTF-8. */
export function outputText(event: { data: string; encoding?: string }): string {
  if (event.encoding !== "base64") return event.data;
  const binary = atob(event.data);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}
