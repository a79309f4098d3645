/** UTF-8 boundaries: output chunks never end inside a multi-byte character. */

/**
 * Length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence. Invalid tails
 * (stray continuation bytes, over-long leads) are not held back: they can never complete.
 */
export function completeUtf8Length(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = n - 1; i >= 0 && i >= n - 4; i--) {
    const b = bytes[i]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = b < 0x80 ? 1 : (b & 0xe0) === 0xc0 ? 2 : (b & 0xf0) === 0xe0 ? 3 : (b & 0xf8) === 0xf0 ? 4 : 1;
    return n - i >= need ? n : i;
  }
  return n;
}

/** The first `max` bytes or fewer, cut at a character boundary (for capped buffered results). */
export function truncateUtf8(bytes: Buffer, max: number): Buffer {
  if (bytes.length <= max) return bytes;
  const head = bytes.subarray(0, max);
  // If the byte after the cut is a continuation byte, the cut splits a character: back off.
  if (((bytes[max] ?? 0) & 0xc0) !== 0x80) return head;
  return head.subarray(0, completeUtf8Length(head));
}
