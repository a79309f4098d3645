/**
 * Web-stream helpers for tests that push a request body chunk by chunk and read an answer as it
 * arrives; platform APIs only, so both the Node and the workerd tests use them.
 */

/** A request body whose chunks are handed over one at a time by the test. */
export function pushedBody(): { body: ReadableStream<Uint8Array>; push(text: string): void; end(): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return { body, push: (text) => controller.enqueue(new TextEncoder().encode(text)), end: () => controller.close() };
}

/** Reads from `reader` until the text so far contains `wanted` (or the stream ends); returns all of it. */
export async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, wanted: string, sofar = ""): Promise<string> {
  const decoder = new TextDecoder();
  let text = sofar;
  while (!text.includes(wanted)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return text;
}
