/**
 * Log entries → wire events. The log stores raw bytes; rendering (utf8 text or base64) happens per
 * reader, at the moment the event is written.
 */
import { isUtf8 } from "node:buffer";
import type { ExecEvent, LogEvent, OutputEventFields, TruncatedFields } from "../../protocol/events.ts";
import { execResultOf, execTimeoutOf } from "./exec.ts";
import type { LogItem } from "./log-reader.ts";
import type { ManagedProcess } from "./managed-process.ts";
import type { OutputEntry, RecordEntry, StatusEntry, TruncatedNotice } from "./output-log.ts";

function iso(time: number): string {
  return new Date(time).toISOString();
}

/** The fields of an output event, in wire order (http/streams/sse-frames.ts writes the same without this object). */
function outputFields(entry: OutputEntry, record: ManagedProcess): OutputEventFields {
  const { offset, data } = entry;
  if (record.spec.encoding === "base64") return { offset, encoding: "base64", data: data.toString("base64") };
  return isUtf8(data) ? { offset, data: data.toString("utf8") } : { offset, bytes: data.length, data: data.toString("utf8") };
}

function truncatedFields(item: TruncatedNotice): TruncatedFields {
  const { droppedEvents, droppedBytes, stdoutDropped, stderrDropped } = item;
  return { droppedEvents, droppedBytes, stdoutDropped, stderrDropped };
}

export function toLogEvent(item: LogItem, record: ManagedProcess): LogEvent {
  const processId = record.id;
  switch (item.kind) {
    case "output":
      return { type: item.stream, processId, timestamp: iso(item.time), seq: item.seq, ...outputFields(item, record) };
    case "status": {
      const { kind: _kind, time, ...fields } = item;
      return { type: "status", processId, timestamp: iso(time), ...fields };
    }
    case "error":
      return {
        type: "error",
        processId,
        timestamp: iso(item.time),
        seq: item.seq,
        error: item.error,
        ...(item.code === undefined ? {} : { code: item.code }),
      };
    case "truncated":
      return { type: "truncated", processId, timestamp: iso(item.time), seq: item.seq, ...truncatedFields(item) };
    case "record":
      return notInProcessLogs(item);
  }
}

/** The `exit` event a log stream ends with, after the final status `entry`. */
export function toExitEvent(entry: StatusEntry, record: ManagedProcess): LogEvent {
  return {
    type: "exit",
    processId: record.id,
    timestamp: iso(entry.time),
    status: entry.status,
    ...(entry.exitCode === undefined ? {} : { exitCode: entry.exitCode }),
  };
}

/**
 * The exec stream's view of the same log: `running` → start, terminal status → complete (or error
 * for a process that never ran, and EXECUTION_TIMEOUT with the result so far for one that ran out
 * of its time limit), output as is.
 */
export function toExecEvent(item: LogItem, record: ManagedProcess): ExecEvent {
  const timestamp = iso(item.time);
  switch (item.kind) {
    case "output":
      return { type: item.stream, timestamp, seq: item.seq, ...outputFields(item, record) };
    case "status":
      if (item.status === "running" || item.status === "starting") {
        return {
          type: "start",
          timestamp,
          seq: item.seq,
          command: record.spec.command,
          processId: record.id,
          ...(item.pid === undefined ? {} : { pid: item.pid }),
          ...(record.spec.sessionId === undefined ? {} : { sessionId: record.spec.sessionId }),
        };
      }
      if (item.status === "error") return { type: "error", timestamp, seq: item.seq, error: item.error ?? "process failed", code: "SPAWN_FAILED" };
      const timeout = execTimeoutOf(record);
      if (timeout) return { type: "error", timestamp, seq: item.seq, error: timeout.message, code: "EXECUTION_TIMEOUT", result: timeout.result };
      return { type: "complete", timestamp, seq: item.seq, exitCode: item.exitCode ?? -1, result: execResultOf(record) };
    case "error":
      return { type: "error", timestamp, seq: item.seq, error: item.error, ...(item.code === undefined ? {} : { code: item.code }) };
    case "truncated":
      return { type: "truncated", timestamp, seq: item.seq, ...truncatedFields(item) };
    case "record":
      return notInProcessLogs(item);
  }
}

/** Records are other engines' events (code cells): a process log never holds one. */
function notInProcessLogs(item: RecordEntry): never {
  throw new Error(`a process log holds no "${item.type}" records`);
}
