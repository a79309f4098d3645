/**
 * A run's log entries → the CodeEvents they stand for. Output is the cell's stdout/stderr (always
 * UTF-8 text); records are the run's other events (start, result, error, complete), stored as the
 * JSON of their fields. The SSE frames of code streams (http/streams/code-frames.ts) write the same JSON
 * without building these objects; this is the reference they are held to.
 */
import type { CodeEvent } from "../../protocol/code.ts";
import type { LogItem } from "../engine/log-reader.ts";

export function toCodeEvent(item: LogItem): CodeEvent {
  const timestamp = new Date(item.time).toISOString();
  switch (item.kind) {
    case "output":
      return { type: item.stream, timestamp, seq: item.seq, data: item.data.toString("utf8"), offset: item.offset };
    case "record":
      return { type: item.type, timestamp, seq: item.seq, ...(JSON.parse(item.json.toString("utf8")) as object) } as CodeEvent;
    case "truncated":
      return { type: "truncated", timestamp, droppedEvents: item.droppedEvents, droppedBytes: item.droppedBytes };
    case "status":
    case "error":
      throw new Error(`a code run's log holds no ${item.kind} entries`);
  }
}
