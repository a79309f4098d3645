/**
 * Where an HTTP/1 body ends, which is all the proxy needs to know of it: bodies pass through as the
 * bytes they are, and the next head on a connection is read (and judged) only from where the last
 * body ended. A request whose framing two parsers could read two ways (Content-Length beside
 * Transfer-Encoding, two lengths, a coding other than chunked, chunked in HTTP/1.0) is refused,
 * so that the server can never find a request where the proxy saw a body. Chunked bodies are
 * scanned for their chunk sizes only: their data is skipped over, never copied.
 */
import { fieldTokens, fieldValues, MessageError, type RequestHead, type ResponseHead } from "./http-head.ts";

export type Framing = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" } | { kind: "close" };

/** A chunk-size line (with its extensions) or a trailer line longer than this is refused. */
const MAX_LINE_BYTES = 4096;
/** All trailer lines together. */
const MAX_TRAILER_BYTES = 16 * 1024;
/** Hex digits of a chunk size: 13 keep it an exact number. */
const MAX_SIZE_DIGITS = 13;

export function requestFraming(head: RequestHead): Framing {
  const codings = fieldTokens(head.fields, "transfer-encoding");
  const lengths = fieldValues(head.fields, "content-length");
  if (fieldValues(head.fields, "transfer-encoding").length > 0) {
    if (lengths.length > 0) throw new MessageError(400, "the request has both Content-Length and Transfer-Encoding");
    if (head.version === "HTTP/1.0") throw new MessageError(400, "an HTTP/1.0 request has Transfer-Encoding");
    if (codings.length !== 1 || codings[0] !== "chunked") throw new MessageError(501, `the transfer coding "${codings.join(", ")}" is not served (only chunked is)`);
    return { kind: "chunked" };
  }
  if (lengths.length === 0) return { kind: "none" };
  const length = contentLength(lengths, 400);
  return length === 0 ? { kind: "none" } : { kind: "length", length };
}

/** How a server's answer to `method` is framed (RFC 9112 6.3). */
export function responseFraming(head: ResponseHead, method: string): Framing {
  if (method === "HEAD" || head.status < 200 || head.status === 204 || head.status === 304) return { kind: "none" };
  const codings = fieldTokens(head.fields, "transfer-encoding");
  const lengths = fieldValues(head.fields, "content-length");
  if (fieldValues(head.fields, "transfer-encoding").length > 0) {
    if (lengths.length > 0) throw new MessageError(502, "the server's answer has both Content-Length and Transfer-Encoding");
    return codings.at(-1) === "chunked" && codings.indexOf("chunked") === codings.length - 1 ? { kind: "chunked" } : { kind: "close" };
  }
  if (lengths.length === 0) return { kind: "close" };
  const length = contentLength(lengths, 502);
  return length === 0 ? { kind: "none" } : { kind: "length", length };
}

function contentLength(values: string[], status: number): number {
  if (values.length !== 1 || !/^\d{1,15}$/.test(values[0]!)) throw new MessageError(status, `Content-Length is not one number: ${JSON.stringify(values.join(", ").slice(0, 60))}`);
  return Number(values[0]);
}

/** Where a chunked body's scan is: in a size line, in a chunk's data, in the trailer. */
const Chunk = {
  Size: 0,
  SizeSpace: 1,
  Extension: 2,
  SizeLf: 3,
  Data: 4,
  DataCr: 5,
  DataLf: 6,
  TrailerStart: 7,
  TrailerLine: 8,
  TrailerLf: 9,
  EndLf: 10,
  Done: 11,
} as const;
type ChunkState = (typeof Chunk)[keyof typeof Chunk];

/**
 * Follows one body through the chunks it arrives in: how much of each belongs to it, and how many
 * bytes of content it has carried (a chunked body's data, without its framing).
 */
export class BodyScanner {
  readonly framing: Framing;
  /** Bytes of content so far. */
  content = 0;
  #remaining: number;
  #state: ChunkState = Chunk.Size;
  #digits = 0;
  #line = 0;
  #trailer = 0;
  #status: number;

  /** `status` is what a malformed chunked body is answered with (400 from a sandbox, 502 from a server). */
  constructor(framing: Framing, status: number) {
    this.framing = framing;
    this.#status = status;
    this.#remaining = framing.kind === "length" ? framing.length : 0;
  }

  /** True once the whole body has been seen (never for a body that ends with its connection). */
  get done(): boolean {
    if (this.framing.kind === "none") return true;
    if (this.framing.kind === "length") return this.#remaining === 0;
    return this.#state === Chunk.Done;
  }

  /** How many bytes at the start of `chunk` belong to the body (the rest follows it). */
  take(chunk: Buffer): number {
    switch (this.framing.kind) {
      case "none":
        return 0;
      case "close":
        this.content += chunk.length;
        return chunk.length;
      case "length": {
        const used = Math.min(this.#remaining, chunk.length);
        this.#remaining -= used;
        this.content += used;
        return used;
      }
      case "chunked":
        return this.#chunked(chunk);
    }
  }

  #chunked(chunk: Buffer): number {
    let at = 0;
    while (at < chunk.length && this.#state !== Chunk.Done) {
      if (this.#state === Chunk.Data) {
        const used = Math.min(this.#remaining, chunk.length - at);
        this.#remaining -= used;
        this.content += used;
        at += used;
        if (this.#remaining === 0) this.#state = Chunk.DataCr;
        continue;
      }
      this.#byte(chunk[at]!);
      at++;
    }
    return at;
  }

  #byte(byte: number): void {
    switch (this.#state) {
      case Chunk.Size: {
        const digit = hexValue(byte);
        if (digit >= 0) {
          if (++this.#digits > MAX_SIZE_DIGITS) this.#fail("a chunk size is too large");
          this.#remaining = this.#remaining * 16 + digit;
        } else if (this.#digits === 0) this.#fail("a chunk has no size");
        else if (byte === 0x0d) this.#state = Chunk.SizeLf;
        else if (byte === 0x3b) this.#state = Chunk.Extension;
        else if (byte === 0x20 || byte === 0x09) this.#state = Chunk.SizeSpace;
        else this.#fail("a chunk size is not hexadecimal");
        return this.#counted();
      }
      case Chunk.SizeSpace:
        // Only whitespace before an extension's ";" (RFC 9112 7.1.1): "5 5" is no size.
        if (byte === 0x3b) this.#state = Chunk.Extension;
        else if (byte !== 0x20 && byte !== 0x09) this.#fail("a chunk size is followed by something other than an extension");
        return this.#counted();
      case Chunk.Extension:
        if (byte === 0x0d) this.#state = Chunk.SizeLf;
        else if (isControl(byte)) this.#fail("a chunk extension holds a control character");
        return this.#counted();
      case Chunk.SizeLf:
        if (byte !== 0x0a) this.#fail("a chunk size line does not end in CRLF");
        this.#line = 0;
        this.#digits = 0;
        this.#state = this.#remaining === 0 ? Chunk.TrailerStart : Chunk.Data;
        return;
      case Chunk.DataCr:
        if (byte !== 0x0d) this.#fail("a chunk's data is longer than its size");
        this.#state = Chunk.DataLf;
        return;
      case Chunk.DataLf:
        if (byte !== 0x0a) this.#fail("a chunk's data does not end in CRLF");
        this.#state = Chunk.Size;
        return;
      case Chunk.TrailerStart:
        if (byte === 0x0d) this.#state = Chunk.EndLf;
        else if (isControl(byte)) this.#fail("a trailer line holds a control character");
        else this.#state = Chunk.TrailerLine;
        return this.#trailerByte();
      case Chunk.TrailerLine:
        if (byte === 0x0d) this.#state = Chunk.TrailerLf;
        else if (isControl(byte)) this.#fail("a trailer line holds a control character");
        return this.#trailerByte();
      case Chunk.TrailerLf:
        if (byte !== 0x0a) this.#fail("a trailer line does not end in CRLF");
        this.#state = Chunk.TrailerStart;
        return this.#trailerByte();
      case Chunk.EndLf:
        if (byte !== 0x0a) this.#fail("the last chunk does not end in CRLF");
        this.#state = Chunk.Done;
        return;
    }
  }

  #counted(): void {
    if (++this.#line > MAX_LINE_BYTES) this.#fail("a chunk size line is too long");
  }

  #trailerByte(): void {
    if (++this.#trailer > MAX_TRAILER_BYTES) this.#fail("the trailer is too long");
  }

  #fail(why: string): never {
    throw new MessageError(this.#status, `malformed chunked body: ${why}`);
  }
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  return -1;
}

/** A control character other than HTAB (CR and LF included). */
function isControl(byte: number): boolean {
  return (byte < 0x20 && byte !== 0x09) || byte === 0x7f;
}
