/**
 * Bytes for the adapters without Node's Buffer (they run in Workers too): base64 both ways, joining
 * chunks, and the text of an output event whichever encoding it came in.
 */

const SLICE = 0x8000;

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  // In slices: String.fromCharCode with a huge argument list overflows the stack.
  for (let i = 0; i < bytes.length; i += SLICE) binary += String.fromCharCode(...bytes.subarray(i, i + SLICE));
  return btoa(binary);
}

export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** The text of an output event (`data`, base64-encoded when `encoding` says so). */
export function eventText(event: { data: string; encoding?: string }): string {
  return event.encoding === "base64" ? new TextDecoder().decode(base64ToBytes(event.data)) : event.data;
}
