/**
 * Log items → SSE frames, each sized before it is written, so a whole batch goes into one buffer.
 * Output chunks (nearly all the bytes) are framed straight from their raw bytes with a fast JSON
 * string encoder (no decoding); everything else goes through the protocol's formatSseEvent. Both
 * produce the JSON of toLogEvent/toExecEvent (tests hold them to it).
 */
import { formatSseEvent } from "../../../protocol/sse.ts";
import { isTerminalStatus } from "../../../protocol/process.ts";
import { toExecEvent, toExitEvent, toLogEvent } from "../../engine/events.ts";
import type { LogItem } from "../../engine/log-reader.ts";
import type { ManagedProcess } from "../../engine/managed-process.ts";
import type { OutputEntry } from "../../engine/output-log.ts";
import type { OutputEncoding } from "../../../protocol/process.ts";
import { jsonStringOfBase64, jsonStringOfUtf8, type JsonStringLiteral } from "./json-text.ts";

/** One SSE frame: its size, and a way to write it into a buffer with room for it. */
export interface Frame {
  readonly byteLength: number;
  /** Writes the frame at `at`; returns the offset after it. */
  writeTo(target: Buffer, at: number): number;
}

export type Framer = (item: LogItem) => Frame;

export class TextFrame implements Frame {
  readonly byteLength: number;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
    this.byteLength = Buffer.byteLength(text);
  }

  writeTo(target: Buffer, at: number): number {
    return at + target.write(this.#text, at);
  }
}

const OUTPUT_TAIL = "}\n\n";

/**
 * An output chunk: header, the data as a JSON string (or base64 text), trailer. Every field comes
 * before `data`, so a frame cut short still says where its data belongs.
 */
export class OutputFrame implements Frame {
  readonly byteLength: number;
  readonly #head: string;
  readonly #literal: JsonStringLiteral;

  constructor(entry: OutputEntry, record: { readonly spec: { readonly encoding: OutputEncoding } }, processIdField: string) {
    const base64 = record.spec.encoding === "base64";
    const timestamp = new Date(entry.time).toISOString();
    this.#literal = base64 ? jsonStringOfBase64(entry.data) : jsonStringOfUtf8(entry.data);
    const extra = base64 ? ',"encoding":"base64"' : this.#literal.lossless ? "" : `,"bytes":${entry.data.length}`;
    this.#head =
      `id: ${entry.seq}\nevent: ${entry.stream}\n` +
      `data: {"type":"${entry.stream}"${processIdField},"timestamp":"${timestamp}","seq":${entry.seq},"offset":${entry.offset}${extra},"data":`;
    this.byteLength = Buffer.byteLength(this.#head) + this.#literal.byteLength + OUTPUT_TAIL.length;
  }

  writeTo(target: Buffer, at: number): number {
    at += target.write(this.#head, at);
    at = this.#literal.writeTo(target, at);
    return at + target.write(OUTPUT_TAIL, at, "latin1");
  }
}

/** Frames for `GET /api/process/{id}/stream` (LogEvent): the final status is followed by `exit`. */
export function logFramer(record: ManagedProcess): Framer {
  const processIdField = `,"processId":${JSON.stringify(record.id)}`;
  return (item) => {
    if (item.kind === "output") return new OutputFrame(item, record, processIdField);
    const frame = formatSseEvent(toLogEvent(item, record));
    if (item.kind !== "status" || !isTerminalStatus(item.status)) return new TextFrame(frame);
    return new TextFrame(frame + formatSseEvent(toExitEvent(item, record)));
  };
}

/** Frames for `POST /api/execute/stream` (ExecEvent). */
export function execFramer(record: ManagedProcess): Framer {
  return (item) => (item.kind === "output" ? new OutputFrame(item, record, "") : new TextFrame(formatSseEvent(toExecEvent(item, record))));
}
