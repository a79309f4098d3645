/** Relays SSE byte streams from the Durable Object to the HTTP caller, unchanged, and reads where a resumed one starts. */
import { SSE_HEADERS } from "../../protocol/sse.ts";
import { InvalidRequestError } from "../rpc/errors.ts";
import type { StreamResumeRequest } from "../rpc/processes.ts";

export function sseResponse(stream: ReadableStream<Uint8Array>): Response {
  return new Response(stream, { headers: SSE_HEADERS });
}

/** Where a resumed stream starts: after Last-Event-ID (what EventSource sends), which wins over `?since=`. */
export function resumeRequest(lastEventId: string | undefined, query: { since?: string | undefined; generation?: string | undefined }): StreamResumeRequest {
  const raw = lastEventId?.trim() || query.since;
  if (raw !== undefined && raw !== "" && !/^\d+$/.test(raw)) {
    throw new InvalidRequestError("Last-Event-ID must be an event id (a whole number)", "INVALID_REQUEST");
  }
  return {
    ...(raw === undefined || raw === "" ? {} : { since: Number(raw) }),
    ...(query.generation === undefined ? {} : { generation: query.generation }),
  };
}
