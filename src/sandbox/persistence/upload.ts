/**
 * A byte stream of unknown length into R2 without holding it whole: R2's `put` needs a known length
 * for a stream, so the bytes are cut into parts of PART_BYTES and sent as a multipart upload, one
 * part in memory at a time (one buffer, reused for every part). A stream that ends within the first
 * part is one plain `put`. The object appears only when the upload completes;
 * a stream that breaks (a cut archive) aborts the upload and leaves no object behind.
 */

/** R2 wants parts of at least 5 MiB (all but the last) and of equal size; 8 MiB keeps memory low and parts few. */
export const PART_BYTES = 8 * 1024 * 1024;

export interface UploadOptions {
  customMetadata?: Record<string, string>;
  contentType?: string;
}

/** Fills `part` from the stream: resolves with how much it holds, and whether the stream ended. */
type PartReader = (part: Uint8Array) => Promise<{ filled: number; done: boolean }>;

/** Copies chunks into the part; the rest of a chunk is kept for the next part. */
function partReader(body: ReadableStream<Uint8Array>): { read: PartReader; cancel(): Promise<void> } {
  const reader = body.getReader();
  let rest: Uint8Array | undefined;
  return {
    async read(part) {
      let filled = 0;
      while (filled < part.byteLength) {
        let chunk = rest;
        rest = undefined;
        if (!chunk) {
          const { value, done } = await reader.read();
          if (done) return { filled, done: true };
          chunk = value;
        }
        const take = Math.min(part.byteLength - filled, chunk.byteLength);
        part.set(chunk.subarray(0, take), filled);
        filled += take;
        if (take < chunk.byteLength) rest = chunk.subarray(take);
      }
      return { filled, done: false };
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
}

/** Sends the stream to `key`; resolves with its size once the object is there. */
export async function uploadStream(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, options: UploadOptions = {}): Promise<number> {
  const metadata = {
    ...(options.customMetadata ? { customMetadata: options.customMetadata } : {}),
    ...(options.contentType ? { httpMetadata: { contentType: options.contentType } } : {}),
  };
  const reader = partReader(body);
  // One buffer for every part: each uploadPart has sent its bytes once it resolves.
  const part = new Uint8Array(PART_BYTES);
  let size = 0;
  let upload: R2MultipartUpload | undefined;
  const parts: R2UploadedPart[] = [];
  try {
    for (;;) {
      const read = await reader.read(part);
      size += read.filled;
      if (read.done && !upload) {
        await bucket.put(key, part.subarray(0, read.filled), metadata);
        return size;
      }
      upload ??= await bucket.createMultipartUpload(key, metadata);
      if (read.filled > 0) parts.push(await upload.uploadPart(parts.length + 1, read.filled === PART_BYTES ? part : part.subarray(0, read.filled)));
      if (read.done) break;
    }
    await upload.complete(parts);
    return size;
  } catch (error) {
    await reader.cancel();
    await upload?.abort().catch(() => undefined);
    throw error;
  }
}
