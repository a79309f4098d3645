/** UTF-8 boundaries: output chunks never end inside a multi-byte character. */
import { completeUtf8Length } from "../../protocol/utf8.ts";

export { completeUtf8Length };

/** The first `max` bytes or fewer, cut at a character boundary (for capped buffered results). */
export function truncateUtf8(bytes: Buffer, max: number): Buffer {
  if (bytes.length <= max) return bytes;
  const head = bytes.subarray(0, max);
  // If the byte after the cut is a continuation byte, the cut splits a character: back off.
  if (((bytes[max] ?? 0) & 0xc0) !== 0x80) return head;
  return head.subarray(0, completeUtf8Length(head));
}
