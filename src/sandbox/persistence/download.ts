/**
 * An R2 object as a byte stream read in ranges of PART_BYTES, each asked for only once the reader
 * has taken the one before. A plain `get` body lets whatever serves it read ahead of a slow reader
 * (the local R2 simulation buffers the whole object when the container extracts slower than the disk
 * reads); ranges cap what can be in flight at one range, wherever the bucket is.
 *
 * A range's body arrives in slices of a few KiB; each is taken into chunks of up to CHUNK_BYTES
 * before it moves on. Every chunk costs the Durable Object and the container's server a fixed
 * amount of work on its way (a read, a write to the connection, a write into the extraction), so
 * 4 KiB slices made a restore spend more time passing chunks along than extracting them.
 */
import { PART_BYTES } from "./upload.ts";

/** Large enough that the per-chunk work vanishes beside the bytes; small beside a range. */
const CHUNK_BYTES = 1024 * 1024;

/** Null when there is no such object. */
export async function openRanged(bucket: R2Bucket, key: string): Promise<{ object: R2Object; body: ReadableStream<Uint8Array> } | null> {
  const object = await bucket.head(key);
  if (!object) return null;
  const size = object.size;
  let offset = 0;
  let reader: ReadableStreamBYOBReader | undefined;
  let left = 0;
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
            left = length;
            reader = range.body.getReader({ mode: "byob" });
          }
          const want = Math.min(CHUNK_BYTES, left);
          const { value, done } = await reader.readAtLeast(want, new Uint8Array(want));
          const got = value?.byteLength ?? 0;
          left -= got;
          if (done || left <= 0) {
            // Every byte of the range is in: what the body still holds is its end.
            if (!done) await reader.cancel();
            reader = undefined;
            if (left > 0) throw new Error(`${key} ended ${left} bytes short of its range`);
          }
          if (got === 0) continue;
          controller.enqueue(value!);
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
