/**
 * The tail of a process's log as wire events (protocol ProcessTail): what the Durable Object keeps
 * of a process beyond its container. Output events are kept from the newest back until their data
 * adds up to the asked bytes (the oldest one kept cut at the front, at a character boundary, its
 * offset moved to match); status and error events are kept whatever their age, so the record of how
 * the process went is whole. Each event keeps its own seq and offset: a reader resumes against the
 * kept tail with the cursors it had.
 */
import type { LogEvent } from "../../protocol/events.ts";
import { toLogEvent } from "./events.ts";
import { LogReader } from "./log-reader.ts";
import type { ManagedProcess } from "./managed-process.ts";

export function logTail(record: ManagedProcess, maxOutputBytes: number): LogEvent[] {
  record.flushOutput();
  const reader = new LogReader(record.log, 0);
  const events: LogEvent[] = [];
  for (let items = reader.take(Number.MAX_SAFE_INTEGER); items.length > 0; items = reader.take(Number.MAX_SAFE_INTEGER)) {
    for (const item of items) if (item.kind !== "record" && item.kind !== "truncated") events.push(toLogEvent(item, record));
  }
  let budget = maxOutputBytes;
  const kept: LogEvent[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type !== "stdout" && event.type !== "stderr") {
      kept.push(event);
      continue;
    }
    if (budget === 0) continue;
    const data = Buffer.from(event.data, event.encoding === "base64" ? "base64" : "utf8");
    if (data.length <= budget) {
      budget -= data.length;
      kept.push(event);
      continue;
    }
    const cut = tailOf(data, budget, event.encoding !== "base64");
    budget = 0;
    if (cut.length === 0) continue;
    const { bytes: _bytes, ...fields } = event;
    kept.push({ ...fields, offset: event.offset + data.length - cut.length, data: cut.toString(event.encoding === "base64" ? "base64" : "utf8") });
  }
  return kept.reverse();
}

/** The last `bytes` of `data`; for text, starting at a character boundary (never inside a UTF-8 sequence). */
function tailOf(data: Buffer, bytes: number, text: boolean): Buffer {
  let start = data.length - bytes;
  if (text) while (start < data.length && (data[start]! & 0xc0) === 0x80) start++;
  return data.subarray(start);
}
