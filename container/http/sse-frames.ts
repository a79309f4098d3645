/**
 * Log items → SSE frames, as buffers. Output chunks (nearly all the bytes) are framed straight from
 * their raw bytes, one buffer per frame, with a fast JSON string encoder (no decoding); everything
 * else goes through the protocol's formatSseEvent. Both produce the JSON of toLogEvent/toExecEvent (tests
 * hold them to it).
 */
import { formatSseEvent } from "../../protocol/sse.ts";
import { toExecEvent, toLogEvent } from "../engine/events.ts";
import type { LogItem } from "../engine/log-reader.ts";
import type { ManagedProcess } from "../engine/managed-process.ts";
import type { OutputEntry } from "../engine/output-log.ts";
import { jsonStringOfUtf8 } from "./json-text.ts";

/** Appends the frame(s) of one item to `out`. */
export type Framer = (item: LogItem, out: Buffer[]) => void;

/** One output frame as one buffer: header, the data as a JSON string (or base64 text), trailer. */
function outputFrame(entry: OutputEntry, record: ManagedProcess, processIdField: string): Buffer {
  const base64 = record.spec.encoding === "base64";
  const timestamp = new Date(entry.time).toISOString();
  const head =
    `id: ${entry.seq}\nevent: ${entry.stream}\n` +
    `data: {"type":"${entry.stream}"${processIdField},"timestamp":"${timestamp}","seq":${entry.seq},"data":`;
  const tail = `,"offset":${entry.offset}${base64 ? ',"encoding":"base64"' : ""}}\n\n`;
  const text = base64 ? `"${entry.data.toString("base64")}"` : undefined;
  const literal = text === undefined ? jsonStringOfUtf8(entry.data) : undefined;
  const headBytes = Buffer.byteLength(head);
  const literalBytes = literal ? literal.byteLength : text!.length;
  const frame = Buffer.allocUnsafe(headBytes + literalBytes + Buffer.byteLength(tail));
  frame.write(head, 0);
  const at = literal ? literal.writeTo(frame, headBytes) : headBytes + frame.write(text!, headBytes, "latin1");
  frame.write(tail, at);
  return frame;
}

/** Frames for `GET /api/process/{id}/stream` (LogEvent). */
export function logFramer(record: ManagedProcess): Framer {
  const processIdField = `,"processId":${JSON.stringify(record.id)}`;
  return (item, out) => {
    if (item.kind === "output") out.push(outputFrame(item, record, processIdField));
    else out.push(Buffer.from(formatSseEvent(toLogEvent(item, record))));
  };
}

/** Frames for `POST /api/execute/stream` (ExecEvent). */
export function execFramer(record: ManagedProcess): Framer {
  return (item, out) => {
    if (item.kind === "output") out.push(outputFrame(item, record, ""));
    else out.push(Buffer.from(formatSseEvent(toExecEvent(item, record))));
  };
}
