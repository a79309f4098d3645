/**
 * Server-Sent Events framing, both directions, with no runtime-specific imports.
 * Frame: `id: <seq>\nevent: <type>\ndata: <json>\n\n`. `: keepalive` comments keep idle streams open.
 */
import { Utf8ChunkDecoder } from "./utf8.ts";

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;

export const KEEPALIVE_FRAME = ": keepalive\n\n";

/** One frame. `data` is JSON-encoded on one line (JSON.stringify never emits raw newlines). */
export function formatSseEvent(event: { type: string; seq?: number }): string {
  const id = event.seq === undefined ? "" : `id: ${event.seq}\n`;
  return `${id}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/**
 * Incremental SSE parser (WHATWG rules: CRLF/CR/LF line ends, `:` comments, multi-line data).
 * Feed it decoded text; it returns the messages completed by that text.
 */
export class SseParser {
  /** Text after the last line end, in the pieces it came in (joined once a line end arrives). */
  #pending: string[] = [];
  #id: string | undefined;
  #event = "";
  #data: string[] = [];
  #hasData = false;

  push(text: string): SseMessage[] {
    // Text with no line end (the middle of a long data line) completes nothing: set it aside rather
    // than join it to what came before, which would copy a long line once per chunk. A CR pending at
    // the end still needs a look (it may end a line by itself).
    if (text.indexOf("\n") === -1 && text.indexOf("\r") === -1 && !this.#pending.at(-1)?.endsWith("\r")) {
      if (text !== "") this.#pending.push(text);
      return [];
    }
    const buffer = this.#pending.length === 0 ? text : this.#pending.join("") + text;
    this.#pending = [];
    const out: SseMessage[] = [];
    let start = 0;
    // Where the next CR is; found once and reused, because SSE from our servers never has one and a
    // fresh scan per line would make parsing quadratic in the chunk size.
    let cr = buffer.indexOf("\r");
    for (;;) {
      if (cr !== -1 && cr < start) cr = buffer.indexOf("\r", start);
      const lf = buffer.indexOf("\n", start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        // A CR at the very end may be the first half of CRLF: wait for more.
        if (cr === buffer.length - 1) break;
        end = cr;
        next = buffer[cr + 1] === "\n" ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      const message = this.#line(buffer.slice(start, end));
      if (message) out.push(message);
      start = next;
    }
    if (start < buffer.length) this.#pending.push(buffer.slice(start));
    return out;
  }

  /**
   * The message being received, as far as it came: its id and event, and its data including an
   * unfinished last data line. Undefined when no data has come yet. For a stream that broke off.
   */
  partial(): SseMessage | undefined {
    const data = [...this.#data];
    const pending = this.#pending.join("");
    if (pending.startsWith("data:")) data.push(pending.slice(pending.startsWith("data: ") ? 6 : 5));
    else if (!this.#hasData) return undefined;
    return { id: this.#id, event: this.#event || "message", data: data.join("\n") };
  }

  #line(line: string): SseMessage | undefined {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      this.#data.push(value);
      this.#hasData = true;
    } else if (field === "event") this.#event = value;
    else if (field === "id" && !value.includes("\0")) this.#id = value;
    return undefined;
  }

  #dispatch(): SseMessage | undefined {
    const id = this.#id;
    const message = this.#hasData ? { id, event: this.#event || "message", data: this.#data.join("\n") } : undefined;
    this.#id = undefined;
    this.#event = "";
    this.#data = [];
    this.#hasData = false;
    return message;
  }
}

/**
 * Parses an SSE byte stream into messages. Cancelling the iteration (`break`) cancels the stream; so
 * does aborting `signal`, which ends the iteration with the signal's reason (no message after it).
 * Pass a parser to look at the message a broken stream was cut off in (`partial()`).
 */
export async function* readSseStream(stream: ReadableStream<Uint8Array>, signal?: AbortSignal, parser = new SseParser()): AsyncGenerator<SseMessage> {
  const reader = stream.getReader();
  const decoder = new Utf8ChunkDecoder();
  // A pending read ends at once when the reader is cancelled.
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    signal?.throwIfAborted();
    for (;;) {
      const { value, done } = await reader.read();
      signal?.throwIfAborted();
      if (done) break;
      for (const message of parser.push(decoder.decode(value))) {
        yield message;
        signal?.throwIfAborted();
      }
    }
    // A message cut off by the end of the stream is incomplete and is dropped, as EventSource does.
    yield* parser.push(decoder.end());
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** Parses an SSE stream whose data fields are JSON event objects (see readSseStream for cancelling). */
export async function* readEventStream<T>(stream: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<T> {
  for await (const message of readSseStream(stream, signal)) {
    yield JSON.parse(message.data) as T;
  }
}
