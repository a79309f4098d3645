/**
 * A sandbox's audit trail as a Server-Sent Events stream, built by the Durable Object from the
 * runtime's long poll: each read waits (up to `waitMs`) for entries after the last one sent, and
 * each entry goes out as an `audit` event with its seq as the SSE id. Entries the bounded log lost
 * before they were read are said with one `dropped` event. The stream reads only while its reader
 * does (a pull per read), says `: keepalive` when nothing happens, and ends with a coded error event
 * when the runtime cannot be reached. It never starts the container, nor keeps it awake: the trail
 * outlives the container, and watching it is no activity of the sandbox's.
 */
import type { AuditEvent, AuditPage } from "../../protocol/network.ts";
import { streamEndEvent } from "../../protocol/events.ts";
import { isErrorCode } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { formatSseEvent, KEEPALIVE_FRAME } from "../../protocol/sse.ts";

/** Reads the trail after `since`, waiting up to `waitMs` for something new; gives up when `signal` aborts. */
export type AuditReader = (since: number, waitMs: number, signal: AbortSignal) => Promise<AuditPage>;

export function auditEventStream(read: AuditReader, since = 0): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const stop = new AbortController();
  let next = since;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const frames: string[] = [];
        try {
          // A poll no longer than the keepalive beat: an idle stream says it lives that often.
          const page = await read(next, LIMITS.keepaliveMs, stop.signal);
          if (page.dropped > 0) {
            const dropped: AuditEvent = { type: "dropped", seq: next + page.dropped, count: page.dropped };
            frames.push(formatSseEvent(dropped));
          }
          for (const entry of page.entries) frames.push(formatSseEvent({ type: "audit", ...entry }));
          next = page.next;
        } catch (error) {
          if (stop.signal.aborted) return;
          const code = (error as { code?: unknown }).code;
          controller.enqueue(encoder.encode(formatSseEvent(streamEndEvent(isErrorCode(code) ? code : "CONTAINER_UNAVAILABLE", (error as Error).message))));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(frames.length > 0 ? frames.join("") : KEEPALIVE_FRAME));
      },
      cancel() {
        stop.abort();
      },
    },
    { highWaterMark: 0 },
  );
}
