/**
 * A byte stream of unknown length into R2 without holding it whole: R2's `put` needs a known length
 * for a stream, so the bytes are cut into parts of PART_BYTES and sent as a multipart upload, one
 * part in memory at a time. A stream that ends within the first part is one plain `put`. The object
 * appears only when the upload completes; a stream that breaks (a cut archive) aborts the upload and
 * leaves no object behind.
 */

/** R2 wants parts of at least 5 MiB (all but the last) and of equal size; 8 MiB keeps memory low and parts few. */
export const PART_BYTES = 8 * 1024 * 1024;

export interface UploadOptions {
  customMetadata?: Record<string, string>;
  contentType?: string;
}

/** Sends the stream to `key`; resolves with its size once the object is there. */
export async function uploadStream(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, options: UploadOptions = {}): Promise<number> {
  const metadata = {
    ...(options.customMetadata ? { customMetadata: options.customMetadata } : {}),
    ...(options.contentType ? { httpMetadata: { contentType: options.contentType } } : {}),
  };
  const reader = body.getReader();
  let part = new Uint8Array(PART_BYTES);
  let filled = 0;
  let size = 0;
  let upload: R2MultipartUpload | undefined;
  const parts: R2UploadedPart[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let offset = 0;
      while (offset < value.byteLength) {
        const take = Math.min(PART_BYTES - filled, value.byteLength - offset);
        part.set(value.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === PART_BYTES) {
          upload ??= await bucket.createMultipartUpload(key, metadata);
          parts.push(await upload.uploadPart(parts.length + 1, part));
          size += filled;
          part = new Uint8Array(PART_BYTES);
          filled = 0;
        }
      }
    }
    size += filled;
    if (!upload) {
      await bucket.put(key, part.subarray(0, filled), metadata);
      return size;
    }
    if (filled > 0) parts.push(await upload.uploadPart(parts.length + 1, part.subarray(0, filled)));
    await upload.complete(parts);
    return size;
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    await upload?.abort().catch(() => undefined);
    throw error;
  }
}
