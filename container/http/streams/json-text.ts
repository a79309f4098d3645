/**
 * Bytes (process output, a file read whole) → a JSON string literal, written straight into a frame
 * or answer buffer, fast. JSON.stringify
 * escapes long strings at only a few hundred MB/s on the machines we measured, and most output needs
 * no escaping at all (or only a newline per line). So: check the bytes are valid UTF-8, scan them for
 * the bytes JSON must escape (control bytes, `"` and `\`), then copy the runs between them with the
 * escapes JSON.stringify writes in between. Dense specials or invalid UTF-8 go through JSON.stringify
 * instead. The bytes are always those of JSON.stringify(bytes.toString("utf8")): a
 * special byte never occurs inside a multi-byte UTF-8 sequence, and valid UTF-8 decodes to no lone
 * surrogates. The scan runs on WebAssembly SIMD where there is (simd-scan.ts), else in JavaScript.
 */
import { isUtf8 } from "node:buffer";
import { simdScanner, type SpecialScanner } from "./simd-scan.ts";

/** The escape JSON.stringify writes for each byte that needs one (undefined: none needed). */
const ESCAPES: (Buffer | undefined)[] = Array.from({ length: 256 }, (_, byte) =>
  byte < 0x20 || byte === 0x22 || byte === 0x5c ? Buffer.from(JSON.stringify(String.fromCharCode(byte)).slice(1, -1)) : undefined,
);

/** A JSON string literal of known length, written on demand. */
export interface JsonStringLiteral {
  readonly byteLength: number;
  /** The literal decodes to exactly the bytes it was made from (false: invalid UTF-8 became U+FFFD). */
  readonly lossless: boolean;
  /** Writes the literal into `target` at `at` (which has room for it); returns the offset after it. */
  writeTo(target: Buffer, at: number): number;
}

/** Whether any of the four bytes of `x` is a control byte, `"` or `\`. */
function hasSpecial(x: number): boolean {
  const quote = x ^ 0x22222222;
  const backslash = x ^ 0x5c5c5c5c;
  return ((((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash) | ((x - 0x20202020) & ~x)) & 0x80808080) !== 0;
}

/**
 * The scan without WebAssembly SIMD: four bytes at a time with the classic word tests ("has a zero
 * byte" after xor with '"' or '\', "has a byte below 0x20"); a word with a hit is looked at bytewise.
 */
export function wordScan(bytes: Uint8Array, maxHits: number): number[] | undefined {
  const length = bytes.length;
  const head = Math.min(length, (4 - (bytes.byteOffset & 3)) & 3);
  const words = length >= 8 ? (length - head) >>> 2 : 0;
  const view = new Uint32Array(bytes.buffer, words > 0 ? bytes.byteOffset + head : 0, words);
  const positions: number[] = [];
  const check = (from: number, to: number): boolean => {
    for (let i = from; i < to; i++) if (ESCAPES[bytes[i]!] && positions.push(i) > maxHits) return false;
    return true;
  };
  if (!check(0, head)) return undefined;
  for (let w = 0; w < words; w++) {
    if (!hasSpecial(view[w]!)) continue;
    const at = head + (w << 2);
    if (!check(at, at + 4)) return undefined;
  }
  return check(head + words * 4, length) ? positions : undefined;
}

const scan: SpecialScanner = simdScanner() ?? wordScan;

/**
 * Positions of the bytes to escape, in order; undefined when there are so many (more than one in 32
 * bytes or so) that JSON.stringify is quicker than copying the runs between them.
 */
function specialPositions(bytes: Buffer): number[] | undefined {
  return scan(bytes, (bytes.length >>> 5) + 8);
}

/** True when `bytes` hold none of the bytes a JSON string must escape (control bytes, `"`, `\`). */
export function needsNoEscapes(bytes: Uint8Array): boolean {
  return scan(bytes, 0)?.length === 0;
}

class EscapedLiteral implements JsonStringLiteral {
  readonly byteLength: number;
  readonly lossless = true;
  readonly #bytes: Buffer;
  readonly #positions: number[];

  constructor(bytes: Buffer, positions: number[]) {
    this.#bytes = bytes;
    this.#positions = positions;
    let length = bytes.length + 2;
    for (const at of positions) length += ESCAPES[bytes[at]!]!.length - 1;
    this.byteLength = length;
  }

  /**
   * One memcpy puts the raw bytes at the end of the literal's place; the runs between specials then
   * move left into position (copyWithin: no view objects per run) with their escapes in between.
   */
  writeTo(target: Buffer, at: number): number {
    const bytes = this.#bytes;
    const end = at + this.byteLength;
    target[at] = 0x22;
    target[end - 1] = 0x22;
    const raw = end - 1 - bytes.length;
    target.set(bytes, raw);
    let out = at + 1;
    let from = 0;
    for (const position of this.#positions) {
      if (position > from) {
        if (out !== raw + from) target.copyWithin(out, raw + from, raw + position);
        out += position - from;
      }
      const escape = ESCAPES[bytes[position]!]!;
      for (let i = 0; i < escape.length; i++) target[out++] = escape[i]!;
      from = position + 1;
    }
    if (from < bytes.length && out !== raw + from) target.copyWithin(out, raw + from, raw + bytes.length);
    return end;
  }
}

class BufferLiteral implements JsonStringLiteral {
  readonly byteLength: number;
  readonly lossless: boolean;
  readonly #text: Buffer;

  constructor(text: Buffer, lossless: boolean) {
    this.#text = text;
    this.byteLength = text.length;
    this.lossless = lossless;
  }

  writeTo(target: Buffer, at: number): number {
    target.set(this.#text, at);
    return at + this.#text.length;
  }
}

/** The JSON string literal of the UTF-8 text in `bytes` (invalid sequences as U+FFFD, like toString). */
export function jsonStringOfUtf8(bytes: Buffer): JsonStringLiteral {
  const valid = isUtf8(bytes);
  const positions = valid ? specialPositions(bytes) : undefined;
  if (positions === undefined) return new BufferLiteral(Buffer.from(JSON.stringify(bytes.toString("utf8"))), valid);
  return new EscapedLiteral(bytes, positions);
}

/** Base64 as a JSON string: the alphabet needs no escapes. */
class Base64Literal implements JsonStringLiteral {
  readonly byteLength: number;
  readonly lossless = true;
  readonly #text: string;

  constructor(data: Buffer) {
    this.#text = `"${data.toString("base64")}"`;
    this.byteLength = this.#text.length;
  }

  writeTo(target: Buffer, at: number): number {
    return at + target.write(this.#text, at, "latin1");
  }
}

/** The JSON string literal of `bytes` in base64 (which needs no escapes). */
export function jsonStringOfBase64(bytes: Buffer): JsonStringLiteral {
  return new Base64Literal(bytes);
}
