/**
 * Bytes ↔ base64 without Node's Buffer (the client runs in Workers, browsers and Node alike): one
 * encoder, one decoder, and what the client builds on them (output text, joined output chunks).
 */

const CHUNK = 0x8000;

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  // In slices: String.fromCharCode with a huge argument list overflows the stack.
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Base64 output as UTF-8 text. */
export function base64ToText(base64: string): string {
  return new TextDecoder().decode(base64ToBytes(base64));
}

/** Base64 chunks as one base64 text of all their bytes (chunk boundaries need not fall on 3-byte groups). */
export function joinBase64(parts: string[]): string {
  return bytesToBase64(concatBytes(parts.map(base64ToBytes)));
}

export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    joined.set(chunk, at);
    at += chunk.length;
  }
  return joined;
}

/** Text of an output event, decoding base64 output to UTF-8. */
export function outputText(event: { data: string; encoding?: string }): string {
  return event.encoding === "base64" ? base64ToText(event.data) : event.data;
}
