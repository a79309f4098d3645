/**
 * A code run's log items → SSE frames (CodeEvent). Output chunks are framed from their raw bytes
 * like a process's; records already hold their fields as JSON, which goes into the frame as it is:
 * the frame's JSON is `{"type":…,"timestamp":…,"seq":…` followed by the record's own fields.
 */
import { formatSseEvent } from "../../../protocol/sse.ts";
import type { RecordEntry } from "../../engine/output-log.ts";
import { toCodeEvent } from "../../interpreter/events.ts";
import { OutputFrame, TextFrame, type Frame, type Framer } from "./sse-frames.ts";

/** Code output is UTF-8 text, never base64. */
const TEXT_OUTPUT = { spec: { encoding: "utf8" as const } };

class RecordFrame implements Frame {
  readonly byteLength: number;
  readonly #head: string;
  readonly #fields: Buffer;

  constructor(entry: RecordEntry) {
    const timestamp = new Date(entry.time).toISOString();
    const empty = entry.json.length <= 2;
    this.#head = `id: ${entry.seq}\nevent: ${entry.type}\ndata: {"type":${JSON.stringify(entry.type)},"timestamp":"${timestamp}","seq":${entry.seq}${empty ? "" : ","}`;
    // The record's JSON without its opening brace; its closing brace closes the event.
    this.#fields = empty ? Buffer.from("}") : entry.json.subarray(1);
    this.byteLength = Buffer.byteLength(this.#head) + this.#fields.length + 2;
  }

  writeTo(target: Buffer, at: number): number {
    at += target.write(this.#head, at);
    at += this.#fields.copy(target, at);
    return at + target.write("\n\n", at);
  }
}

export function codeFramer(): Framer {
  return (item) => {
    if (item.kind === "output") return new OutputFrame(item, TEXT_OUTPUT, "");
    if (item.kind === "record") return new RecordFrame(item);
    return new TextFrame(formatSseEvent(toCodeEvent(item)));
  };
}
