/**
 * An R2 object as a byte stream read in ranges of PART_BYTES, each asked for only once the reader
 * has taken the one before. A plain `get` body lets whatever serves it read ahead of a slow reader
 * (the local R2 simulation buffers the whole object when the container extracts slower than the disk
 * reads); ranges cap what can be in flight at one range, wherever the bucket is.
 */
import { PART_BYTES } from "./upload.ts";

/** Null when there is no such object. */
export async function openRanged(bucket: R2Bucket, key: string): Promise<{ object: R2Object; body: ReadableStream<Uint8Array> } | null> {
  const object = await bucket.head(key);
  if (!object) return null;
  const size = object.size;
  let offset = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (!reader) {
            if (offset >= size) {
              controller.close();
              return;
            }
            const length = Math.min(PART_BYTES, size - offset);
            const range = await bucket.get(key, { range: { offset, length } });
            if (!range) throw new Error(`${key} went away while it was read`);
            offset += length;
            reader = range.body.getReader();
          }
          const { value, done } = await reader.read();
          if (done) {
            reader = undefined;
            continue;
          }
          controller.enqueue(value);
          return;
        }
      },
      async cancel(reason) {
        await reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return { object, body };
}
