/**
 * A JSON body that carries one large string (a file's content) cut in two: the small rest, for
 * JSON.parse and the schema, and that string's value as the UTF-8 bytes it already is in the body.
 * Parsed the usual way, a 256 KiB content becomes a string of the whole body, a second string of
 * the content, and bytes again to write: three passes over it and two large strings for the garbage
 * collector, which profiles of JSON file writes showed as most of the server's work.
 *
 * It cuts only where it cannot change what JSON.parse would have read: no backslash anywhere in the
 * body (so every `"` opens or closes a string, and no string holds an escape), the value a string
 * of valid UTF-8 without control bytes (so its text is exactly its bytes), and the last key of that
 * name (the one JSON.parse keeps). The caller checks the parsed value holds "" there. For schemas
 * whose values are all primitives: a key of that name inside a nested object fails their validation.
 * Anything else gets the whole text.
 */
import { isUtf8 } from "node:buffer";
import { needsNoEscapes } from "./streams/json-text.ts";

/** Below this, cutting saves less than the extra scans cost. */
const MIN_CUT_BYTES = 16 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

export interface CutBody {
  /** The body's text, with the field's value left as "" when `value` is set. */
  text: string;
  /** The UTF-8 bytes of the field's string value (a view of the body). */
  value?: Buffer;
}

export function cutStringField(body: Buffer, name: string): CutBody {
  const whole = (): CutBody => ({ text: body.toString("utf8") });
  if (body.length < MIN_CUT_BYTES || body.includes(BACKSLASH)) return whole();
  const key = Buffer.from(JSON.stringify(name));
  let found: { open: number; close: number } | undefined;
  // Strings come as pairs of quotes, in order; a string followed by a colon is a key.
  for (let at = 0; ; ) {
    const open = body.indexOf(QUOTE, at);
    if (open === -1) break;
    const close = body.indexOf(QUOTE, open + 1);
    if (close === -1) return whole();
    at = close + 1;
    const colon = skipSpace(body, close + 1);
    if (body[colon] !== COLON || close + 1 - open !== key.length || !body.subarray(open, close + 1).equals(key)) continue;
    const valueOpen = skipSpace(body, colon + 1);
    if (body[valueOpen] !== QUOTE) {
      found = undefined; // the last key of that name holds no string: the schema judges it
      continue;
    }
    const valueClose = body.indexOf(QUOTE, valueOpen + 1);
    if (valueClose === -1) return whole();
    found = { open: valueOpen, close: valueClose };
    at = valueClose + 1;
  }
  if (!found) return whole();
  const value = body.subarray(found.open + 1, found.close);
  if (!isUtf8(value) || !needsNoEscapes(value)) return whole();
  const text = body.toString("utf8", 0, found.open + 1) + body.toString("utf8", found.close);
  return { text, value };
}

/** The first position at or after `at` that is not JSON whitespace. */
function skipSpace(body: Buffer, at: number): number {
  let i = at;
  while (i < body.length) {
    const byte = body[i]!;
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break;
    i++;
  }
  return i;
}
