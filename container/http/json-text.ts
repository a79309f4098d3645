/**
 * Output bytes → a JSON string literal, as bytes, fast. JSON.stringify escapes long strings at only a
 * few hundred MB/s on the machines we measured, and most output needs no escaping at all (or only a
 * few newlines). So: check the bytes are valid UTF-8, scan them four at a time for the bytes JSON
 * must escape, and
 *  - none: the literal is the bytes themselves between quotes (no copy, no decoding);
 *  - a sparse few of `"` `\` \n \r \t ESC: copy the runs between them with escapes in between;
 *  - anything else (other control bytes, specials in most words, invalid UTF-8): JSON.stringify.
 * The bytes are always those of JSON.stringify(bytes.toString("utf8")): a special byte never occurs
 * inside a multi-byte UTF-8 sequence, and valid UTF-8 decodes to no lone surrogates.
 */
import { isUtf8 } from "node:buffer";

const QUOTE = Buffer.from('"');

/** Escapes for the bytes handled without JSON.stringify. */
const ESCAPES: Record<number, Buffer> = {
  0x22: Buffer.from('\\"'),
  0x5c: Buffer.from("\\\\"),
  0x0a: Buffer.from("\\n"),
  0x0d: Buffer.from("\\r"),
  0x09: Buffer.from("\\t"),
  0x1b: Buffer.from("\\u001b"),
};

/** Bytes JSON must escape: control bytes, `"` and `\`. 1 = has a short escape above, 2 = needs stringify. */
const SPECIAL = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte++) SPECIAL[byte] = 2;
for (const byte of Object.keys(ESCAPES)) SPECIAL[Number(byte)] = 1;

/**
 * Positions of bytes to escape, or undefined when the fast path does not apply (a control byte
 * without a short escape here, or so many specials that JSON.stringify is quicker).
 */
function specialPositions(bytes: Uint8Array): number[] | undefined {
  const length = bytes.length;
  const head = Math.min(length, (4 - (bytes.byteOffset & 3)) & 3);
  const words = length >= 8 ? (length - head) >>> 2 : 0;
  const view = new Uint32Array(bytes.buffer, words > 0 ? bytes.byteOffset + head : 0, words);
  // Copying runs pays off only while specials are rare: more than one word in 16 → stringify.
  const budget = (words >>> 4) + 4;
  const hitWords: number[] = [];
  // Hot loop, four bytes at a time, with the classic word tests: "has a zero byte" (after xor with
  // '"' or '\') and "has a byte below 0x20".
  for (let w = 0; w < words; w++) {
    const x = view[w]!;
    const quote = x ^ 0x22222222;
    const backslash = x ^ 0x5c5c5c5c;
    if (((((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash) | ((x - 0x20202020) & ~x)) & 0x80808080) !== 0) {
      if (hitWords.push(w) > budget) return undefined;
    }
  }
  const positions: number[] = [];
  const check = (at: number): boolean => {
    const kind = SPECIAL[bytes[at]!]!;
    if (kind === 1) positions.push(at);
    return kind !== 2;
  };
  for (let i = 0; i < head; i++) if (!check(i)) return undefined;
  for (const w of hitWords) {
    const at = head + (w << 2);
    if (!check(at) || !check(at + 1) || !check(at + 2) || !check(at + 3)) return undefined;
  }
  for (let i = head + words * 4; i < length; i++) if (!check(i)) return undefined;
  return positions.sort((a, b) => a - b);
}

/** The JSON string literal of the UTF-8 text in `bytes`, as a list of buffers to write in order. */
export function jsonStringOfUtf8(bytes: Buffer): Buffer[] {
  const positions = isUtf8(bytes) ? specialPositions(bytes) : undefined;
  if (positions === undefined) return [Buffer.from(JSON.stringify(bytes.toString("utf8")))];
  const parts: Buffer[] = [QUOTE];
  let from = 0;
  for (const at of positions) {
    if (at > from) parts.push(bytes.subarray(from, at));
    parts.push(ESCAPES[bytes[at]!]!);
    from = at + 1;
  }
  if (from < bytes.length) parts.push(bytes.subarray(from));
  parts.push(QUOTE);
  return parts;
}
