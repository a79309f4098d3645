/** UTF-8 chunk boundaries, for both sides: no runtime-specific imports. */

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

/**
 * Decodes a byte stream chunk by chunk, like `TextDecoder.decode(chunk, {stream: true})` and with the
 * same text, but each chunk through the decoder's one-shot path: a character split across chunks is
 * held back until its last bytes arrive. Why: in Node, a streaming TextDecoder leaves its fast path
 * for good and returns two-byte strings even for ASCII, which makes decoding and everything done with
 * the text after it (SSE parsing, JSON.parse) markedly slower.
 */
export class Utf8ChunkDecoder {
  readonly #decoder = new TextDecoder();
  #carry: Uint8Array | undefined;

  decode(chunk: Uint8Array): string {
    let bytes = chunk;
    if (this.#carry) {
      bytes = new Uint8Array(this.#carry.length + chunk.length);
      bytes.set(this.#carry);
      bytes.set(chunk, this.#carry.length);
      this.#carry = undefined;
    }
    const cut = completeUtf8Length(bytes);
    if (cut < bytes.length) {
      this.#carry = bytes.slice(cut);
      bytes = bytes.subarray(0, cut);
    }
    return bytes.length === 0 ? "" : this.#decoder.decode(bytes);
  }

  /** The end of the stream: bytes of a character that never finished become U+FFFD, as TextDecoder does. */
  end(): string {
    const carry = this.#carry;
    this.#carry = undefined;
    return carry ? this.#decoder.decode(carry) : "";
  }
}

/** Bytes of `text` in UTF-8 (a lone surrogate counts as the 3 bytes of U+FFFD, as encoders write it). */
export function utf8ByteLength(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a pair: 4 bytes for 2 code units
      i++;
    } else bytes += 2;
  }
  return bytes;
}
