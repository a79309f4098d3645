/**
 * Stream events. Every SSE stream frames one of these per event; the SSE `id:` is the event's `seq`
 * in its process log, so `Last-Event-ID` resumes exactly after it.
 */
import type { ExecResult, OutputEncoding, ProcessStatus } from "./process.ts";

interface EventBase {
  timestamp: string;
  /** Position in the process log (from 1). Absent on events that are not in the log. */
  seq?: number;
}

/** A status change of a process, as its log records it and its `status` event carries it. */
export interface StatusFields {
  status: ProcessStatus;
  exitCode?: number;
  signal?: string;
  timedOut?: boolean;
  pid?: number;
  error?: string;
}

export interface OutputEventFields {
  data: string;
  /** Byte offset of this chunk's first byte within its own stream. */
  offset: number;
  encoding?: OutputEncoding;
}

/**
 * `POST /api/execute/stream`, and `GET /api/execute/{id}/stream` to resume one (Cloudflare's Sandbox
 * SDK ExecEvent, plus pid/processId/offset/seq).
 */
export type ExecEvent =
  | (EventBase & { type: "start"; command: string; processId: string; pid?: number; sessionId?: string })
  | (EventBase & { type: "stdout" | "stderr" } & OutputEventFields)
  | (EventBase & { type: "complete"; exitCode: number; result: ExecResult })
  | (EventBase & { type: "error"; error: string; code?: string })
  | (EventBase & { type: "truncated"; droppedEvents: number; droppedBytes: number });

/** `GET /api/process/{id}/stream` (Cloudflare's Sandbox SDK LogEvent, with status changes, then `exit`). */
export type LogEvent =
  | (EventBase & { type: "stdout" | "stderr"; processId: string } & OutputEventFields)
  | (EventBase & StatusFields & { type: "status"; processId: string })
  | (EventBase & {
      type: "truncated";
      processId: string;
      /** Events and bytes the reader asked for that are no longer retained. */
      droppedEvents: number;
      droppedBytes: number;
    })
  | (EventBase & { type: "error"; processId: string; error: string; code?: string })
  /**
   * Last of all, right after the final status: how the process ended, for readers that wait for an
   * `exit` event (Cloudflare's Sandbox SDK does). It is not in the log (no `seq`), so a stream
   * resumed after the final status has nothing more to send.
   */
  | (EventBase & { type: "exit"; processId: string; status: ProcessStatus; exitCode?: number });
