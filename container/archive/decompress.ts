/**
 * An archive's body as tar bytes: gunzipped when it starts with gzip's magic bytes, as it is
 * otherwise (a plain tar; anything else the tar parser refuses). Decompression is ours rather than
 * node-tar's so that what it unfolds to passes the framing check (tar-framing.ts) before any parser
 * sees it, and is pulled a chunk at a time: a small body never unfolds into memory faster than the
 * extraction takes it.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { ServiceError } from "../../server-kit/service-error.ts";

/** Decompressed chunks of at most this size: what one step of the extraction handles. */
const CHUNK_BYTES = 64 * 1024;

function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

export interface Decompressed {
  chunks: AsyncIterable<Buffer>;
  /** Body bytes read so far. */
  readonly bytesRead: number;
}

export function decompressed(body: AsyncIterable<Buffer>): Decompressed {
  let bytesRead = 0;
  const counted = async function* (): AsyncGenerator<Buffer> {
    for await (const chunk of body) {
      bytesRead += chunk.length;
      yield chunk;
    }
  };
  const chunks = async function* (): AsyncGenerator<Buffer> {
    const source = counted();
    // The first two bytes decide; a first chunk of one byte waits for the next.
    let head: Buffer = Buffer.alloc(0);
    while (head.length < 2) {
      const next = await source.next();
      if (next.done) break;
      head = head.length === 0 ? next.value : Buffer.concat([head, next.value]);
    }
    if (!isGzip(head)) {
      if (head.length > 0) yield head;
      yield* source;
      return;
    }
    const all = async function* (): AsyncGenerator<Buffer> {
      yield head;
      yield* source;
    };
    const gunzip = createGunzip({ chunkSize: CHUNK_BYTES });
    // Its failures reach the reading below too (pipeline destroys the gunzip with them).
    pipeline(Readable.from(all(), { objectMode: false }), gunzip).catch(() => undefined);
    try {
      for await (const chunk of gunzip as AsyncIterable<Buffer>) yield chunk;
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      throw new ServiceError("INVALID_ARCHIVE", `not a gzip-compressed tar archive: ${(error as Error).message}`);
    } finally {
      gunzip.destroy();
    }
  };
  return {
    chunks: chunks(),
    get bytesRead() {
      return bytesRead;
    },
  };
}
