/**
 * Stream events. Every SSE stream frames one of these per event; the SSE `id:` is the event's `seq`
 * in its process log, so `Last-Event-ID` resumes exactly after it.
 */
import { isErrorCode, type ErrorCode } from "./errors.ts";
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

/**
 * An output chunk. On the wire `offset`, `encoding` and `bytes` come before `data`, so a reader whose
 * connection broke in the middle of a chunk knows where the part it got belongs (see partial-event.ts).
 */
export interface OutputEventFields {
  /** Byte offset of this chunk's first byte within its own stream. */
  offset: number;
  encoding?: OutputEncoding;
  /**
   * The chunk's length in bytes, given only when `data` does not decode to exactly its bytes (utf8
   * output that was not valid UTF-8, shown with U+FFFD). Otherwise the length is that of `data`'s
   * UTF-8 (or, with base64, of the decoded bytes).
   */
  bytes?: number;
  data: string;
}

/**
 * Output a reader asked for that is no longer retained. Its id is the last dropped event's, so a
 * reader that resumes after it is not told again.
 */
export interface TruncatedFields {
  /** Events after the reader's position that are gone. */
  droppedEvents: number;
  /** Output bytes the reader wanted that are gone, in all and per stream (the stream continues that far on). */
  droppedBytes: number;
  stdoutDropped: number;
  stderrDropped: number;
}

/**
 * `POST /api/execute/stream`, and `GET /api/execute/{id}/stream` to resume one (Cloudflare's Sandbox
 * SDK ExecEvent, plus pid/processId/offset/seq).
 */
export type ExecEvent =
  | (EventBase & { type: "start"; command: string; processId: string; pid?: number; sessionId?: string })
  | (EventBase & { type: "stdout" | "stderr" } & OutputEventFields)
  | (EventBase & { type: "complete"; exitCode: number; result: ExecResult })
  /** `result`: with code EXECUTION_TIMEOUT, the result so far (its stdout/stderr empty: the output came as events). */
  | (EventBase & { type: "error"; error: string; code?: string; result?: ExecResult })
  | (EventBase & { type: "truncated" } & TruncatedFields);

/** `GET /api/process/{id}/stream` (Cloudflare's Sandbox SDK LogEvent, with status changes, then `exit`). */
export type LogEvent =
  | (EventBase & { type: "stdout" | "stderr"; processId: string } & OutputEventFields)
  | (EventBase & StatusFields & { type: "status"; processId: string })
  | (EventBase & { type: "truncated"; processId: string } & TruncatedFields)
  | (EventBase & { type: "error"; processId: string; error: string; code?: string })
  /**
   * Last of all, right after the final status: how the process ended, for readers that wait for an
   * `exit` event (Cloudflare's Sandbox SDK does). It is not in the log (no `seq`), so a stream
   * resumed after the final status has nothing more to send.
   */
  | (EventBase & { type: "exit"; processId: string; status: ProcessStatus; exitCode?: number });

/**
 * The result so far of an exec stream's last event when the command ran out of its time limit
 * (EXECUTION_TIMEOUT), else undefined: what readers whose framework wants a result, not an error
 * (exit code 124, timed out), answer with.
 */
export function timedOutResult(event: ExecEvent): ExecResult | undefined {
  return event.type === "error" && event.code === "EXECUTION_TIMEOUT" ? event.result : undefined;
}

/**
 * How a stream ends when it cannot go on because the container behind it stopped (destroyed,
 * crashed): an `error` event that is in no process log — no `seq`, so no SSE id — with a `code`.
 * A reader raises it as an error with that code rather than reconnect: what it followed is gone.
 */
export interface StreamEndEvent {
  type: "error";
  timestamp: string;
  error: string;
  code: ErrorCode;
}

export function streamEndEvent(code: ErrorCode, error: string): StreamEndEvent {
  return { type: "error", timestamp: new Date().toISOString(), error, code };
}

export function isStreamEnd(event: { type?: unknown; seq?: unknown; code?: unknown }): event is StreamEndEvent {
  return event.type === "error" && event.seq === undefined && isErrorCode(event.code);
}
