/**
 * Log entries → wire events. The log stores raw bytes; rendering (utf8 text or base64) happens per
 * reader, at the moment the event is written.
 */
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import type { OutputEventFields } from "../../protocol/events.ts";
import { execResultOf } from "./exec.ts";
import type { LogItem } from "./log-reader.ts";
import type { ManagedProcess } from "./managed-process.ts";
import type { OutputEntry, RecordEntry } from "./output-log.ts";

function iso(time: number): string {
  return new Date(time).toISOString();
}

function outputFields(entry: OutputEntry, record: ManagedProcess): OutputEventFields {
  const encoding = record.spec.encoding;
  const fields: OutputEventFields = { data: entry.data.toString(encoding), offset: entry.offset };
  if (encoding === "base64") fields.encoding = "base64";
  return fields;
}

export function toLogEvent(item: LogItem, record: ManagedProcess): LogEvent {
  const processId = record.id;
  switch (item.kind) {
    case "output":
      return { type: item.stream, processId, timestamp: iso(item.time), seq: item.seq, ...outputFields(item, record) };
    case "status": {
      const { kind: _kind, time, endBytes: _end, ...fields } = item;
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
      return { type: "truncated", processId, timestamp: iso(item.time), droppedEvents: item.droppedEvents, droppedBytes: item.droppedBytes };
    case "record":
      return notInProcessLogs(item);
  }
}

/**
 * The exec stream's view of the same log: `running` → start, terminal status → complete (or error
 * for a process that never ran), output as is.
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
      return { type: "complete", timestamp, seq: item.seq, exitCode: item.exitCode ?? -1, result: execResultOf(record) };
    case "error":
      return { type: "error", timestamp, seq: item.seq, error: item.error, ...(item.code === undefined ? {} : { code: item.code }) };
    case "truncated":
      return { type: "truncated", timestamp, droppedEvents: item.droppedEvents, droppedBytes: item.droppedBytes };
    case "record":
      return notInProcessLogs(item);
  }
}

/** Records are other engines' events (code cells): a process log never holds one. */
function notInProcessLogs(item: RecordEntry): never {
  throw new Error(`a process log holds no "${item.type}" records`);
}
