/** Relays an SSE byte stream from the Durable Object to the HTTP caller, unchanged. */
import { SSE_HEADERS } from "../../protocol/sse.ts";

export function sseResponse(stream: ReadableStream<Uint8Array>): Response {
  return new Response(stream, { headers: SSE_HEADERS });
}

/** The resume point of a log stream: Last-Event-ID (what EventSource sends) wins over `?since=`. */
export function resumePoint(lastEventId: string | undefined, since: string | undefined): number | undefined {
  const raw = lastEventId?.trim() || since;
  if (raw === undefined || raw === "") return undefined;
  return /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
}
