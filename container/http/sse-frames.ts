/**
 * Log items → SSE frames, as buffers. Output chunks (nearly all the bytes) are framed straight from
 * their raw bytes with a fast JSON string encoder (no decoding, usually no copy); everything else goes
 * through the protocol's formatSseEvent. Both produce the JSON of toLogEvent/toExecEvent (tests
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

function pushOutputFrame(out: Buffer[], entry: OutputEntry, record: ManagedProcess, processIdField: string): void {
  const base64 = record.spec.encoding === "base64";
  const timestamp = new Date(entry.time).toISOString();
  out.push(
    Buffer.from(
      `id: ${entry.seq}\nevent: ${entry.stream}\n` +
        `data: {"type":"${entry.stream}"${processIdField},"timestamp":"${timestamp}","seq":${entry.seq},"data":` +
        (base64 ? `"${entry.data.toString("base64")}"` : ""),
    ),
  );
  if (!base64) out.push(...jsonStringOfUtf8(entry.data));
  out.push(Buffer.from(`,"offset":${entry.offset}${base64 ? ',"encoding":"base64"' : ""}}\n\n`));
}

/** Frames for `GET /api/process/{id}/stream` (LogEvent). */
export function logFramer(record: ManagedProcess): Framer {
  const processIdField = `,"processId":${JSON.stringify(record.id)}`;
  return (item, out) => {
    if (item.kind === "output") pushOutputFrame(out, item, record, processIdField);
    else out.push(Buffer.from(formatSseEvent(toLogEvent(item, record))));
  };
}

/** Frames for `POST /api/execute/stream` (ExecEvent). */
export function execFramer(record: ManagedProcess): Framer {
  return (item, out) => {
    if (item.kind === "output") pushOutputFrame(out, item, record, "");
    else out.push(Buffer.from(formatSseEvent(toExecEvent(item, record))));
  };
}
