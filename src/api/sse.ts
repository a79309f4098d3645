/** Relays SSE byte streams from the Durable Object to the HTTP caller, unchanged, and reads where a resumed one starts. */
import type { z } from "zod";
import { lastEventIdSchema, resumePointOf, type resumeQuerySchema } from "../../protocol/resume.ts";
import { SSE_HEADERS } from "../../protocol/sse.ts";
import { InvalidRequestError } from "../rpc/errors.ts";
import type { StreamResumeRequest } from "../rpc/processes.ts";

export function sseResponse(stream: ReadableStream<Uint8Array>): Response {
  return new Response(stream, { headers: SSE_HEADERS });
}

/** Where a resumed stream starts: after Last-Event-ID (what EventSource sends), which wins over `?since=`; from the query's byte offsets. */
export function resumeRequest(
  lastEventId: string | undefined,
  query: z.output<typeof resumeQuerySchema> & { generation?: string | undefined },
): StreamResumeRequest {
  const header = lastEventIdSchema.safeParse(lastEventId ?? "");
  if (!header.success) throw new InvalidRequestError("Last-Event-ID must be an event id (a whole number)", "INVALID_REQUEST");
  return { ...resumePointOf(header.data, query), ...(query.generation === undefined ? {} : { generation: query.generation }) };
}
