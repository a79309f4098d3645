/**
 * The part of an output event that arrived before its connection broke. Output events put every
 * field before `data` (see OutputEventFields), so a frame cut short still says which stream and
 * byte offset its data belongs to; the data that came is decoded up to its last whole character
 * (utf8) or whole group of four (base64). With that, a reader keeps what it got and resumes from
 * the byte after it (protocol/resume.ts) instead of losing or repeating it.
 *
 * Data whose text is not exactly its bytes (the event has `bytes`: invalid UTF-8 shown as U+FFFD)
 * cannot be cut by byte count: such an event is not used in part, and is resent whole.
 */
import type { OutputEventFields } from "./events.ts";
import { utf8ByteLength } from "./utf8.ts";

/** An output event cut short: the fields before its data, the data that came, and how many bytes that is. */
export type PartialOutputEvent = Record<string, unknown> &
  OutputEventFields & {
    type: "stdout" | "stderr";
    /** Bytes of output `data` stands for. */
    byteLength: number;
  };

/** `{` then flat string or integer fields, each followed by a comma, then `"data":"`. */
const HEAD = /^\{((?:"[A-Za-z]+":(?:"(?:[^"\\]|\\.)*"|-?\d+),)*)"data":"/;

/** The output event a message's data begins, as far as it is usable; undefined for anything else. */
export function partialOutputEvent(data: string): PartialOutputEvent | undefined {
  const head = HEAD.exec(data);
  if (!head) return undefined;
  let fields: Record<string, unknown>;
  try {
    fields = JSON.parse(`{${head[1]!.slice(0, -1)}}`) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { type, offset } = fields;
  if ((type !== "stdout" && type !== "stderr") || typeof offset !== "number" || fields.bytes !== undefined) return undefined;
  const text = stringPrefix(data.slice(head[0].length));
  if (text === undefined) return undefined;
  if (fields.encoding === "base64") {
    const whole = text.slice(0, text.length - (text.length % 4));
    return { ...fields, type, offset, data: whole, byteLength: base64ByteLength(whole) };
  }
  return { ...fields, type, offset, data: text, byteLength: utf8ByteLength(text) };
}

/** Bytes of output an output event (or the part of one that came) stands for. */
export function outputByteLength(event: { data: string; encoding?: string | undefined; bytes?: number | undefined }): number {
  if (event.bytes !== undefined) return event.bytes;
  return event.encoding === "base64" ? base64ByteLength(event.data) : utf8ByteLength(event.data);
}

/** Bytes that base64 text (whole groups of four) decodes to. */
export function base64ByteLength(text: string): number {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return Math.floor(text.length / 4) * 3 - padding;
}

/**
 * The text of the body of a JSON string literal that may be cut anywhere: escapes are decoded up to
 * the last complete one, and a surrogate left without its pair is dropped.
 */
function stringPrefix(body: string): string | undefined {
  let end = 0;
  while (end < body.length) {
    const code = body.charCodeAt(end);
    if (code === 0x22) break; // the closing quote: the string is whole
    if (code !== 0x5c) {
      end++;
      continue;
    }
    const length = body[end + 1] === "u" ? 6 : 2;
    if (end + length > body.length) break;
    end += length;
  }
  let text: string;
  try {
    text = JSON.parse(`"${body.slice(0, end)}"`) as string;
  } catch {
    return undefined;
  }
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}
