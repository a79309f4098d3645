/**
 * Where the proxy's own connections read to: large slabs (a few large writes on instead of many
 * 64 KiB ones), each read into the room after the last so nothing handed on is overwritten, and
 * slabs used again once every byte read into them has been written on (or copied: a head). A fresh
 * slab for every megabyte, or for every connection, would cost the allocator, the page faults of
 * new memory and the collector more than the copying itself. A slab with a byte that was never
 * passed on (bytes left when a connection ended) is simply left to the collector. A read takes no
 * more than its reader's room (little while its sandbox's buffers, or the runtime's, are spent:
 * proxy-memory.ts), so a paused connection holds little however much its server has sent.
 */
import type { OnReadOpts } from "node:net";
import { PROXY_LIMITS } from "./proxy-limits.ts";
import { RUNTIME_BUFFERS } from "./proxy-memory.ts";

/** Bytes of each slab, and the least room left in one before the next is taken. */
const SLAB_BYTES = 1024 * 1024;
const MIN_ROOM = 64 * 1024;
/** Slabs kept for use again, across every connection of the runtime. */
const MAX_FREE = 16;

interface Slab {
  bytes: Buffer;
  used: number;
  /** Bytes read into it and not yet written on. */
  outstanding: number;
  /** No longer read into: it goes back to the free list once nothing is outstanding. */
  retired: boolean;
}

const free: Buffer[] = [];
/** A slab's bookkeeping, kept on its memory itself (a weak map would hold dead slabs until a full collection). */
const SLAB = Symbol("slab");
type SlabMemory = ArrayBufferLike & { [SLAB]?: Slab | undefined };

export interface SlabReader {
  options: OnReadOpts;
  /** The socket is closed: its last slab goes back too once its bytes are written on. */
  close(): void;
}

/** Read options for a socket: each chunk read goes to `push`, and takes at most `room(most)` bytes, `most` being what the slab (and the runtime's buffers) allow. */
export function slabReads(push: (chunk: Buffer) => void, room: (most: number) => number): SlabReader {
  let slab = takeSlab();
  return {
    options: {
      buffer: () => {
        if (slab.bytes.length - slab.used < MIN_ROOM) {
          retire(slab);
          slab = takeSlab();
        }
        const space = slab.bytes.subarray(slab.used);
        return space.subarray(0, room(RUNTIME_BUFFERS.over ? Math.min(space.length, PROXY_LIMITS.bufferedWhenOver) : space.length));
      },
      callback: (count, buffer) => {
        slab.used += count;
        slab.outstanding += count;
        push((buffer as Buffer).subarray(0, count));
        return true;
      },
    },
    close: () => retire(slab),
  };
}

/** `chunk` (some bytes of a slab) has been written on, or copied: nothing will read it again. */
export function released(chunk: Buffer): void {
  const slab = (chunk.buffer as SlabMemory)[SLAB];
  if (!slab || chunk.length === 0) return;
  slab.outstanding -= chunk.length;
  if (slab.retired && slab.outstanding === 0) recycle(slab);
}

function takeSlab(): Slab {
  const bytes = free.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES);
  const slab: Slab = { bytes, used: 0, outstanding: 0, retired: false };
  (bytes.buffer as SlabMemory)[SLAB] = slab;
  return slab;
}

function retire(slab: Slab): void {
  if (slab.retired) return;
  slab.retired = true;
  if (slab.outstanding === 0) recycle(slab);
}

function recycle(slab: Slab): void {
  (slab.bytes.buffer as SlabMemory)[SLAB] = undefined;
  if (free.length < MAX_FREE) free.push(slab.bytes);
}
