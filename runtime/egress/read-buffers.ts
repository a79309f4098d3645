/**
 * Where the proxy's own connections read to: large slabs (a few large writes on instead of many
 * 64 KiB ones), each read into the room after the last so nothing handed on is overwritten, and
 * slabs used again once every byte read into them has been written on. A fresh slab for every
 * megabyte would cost the allocator, the page faults of new memory and the collector more than the
 * copying itself. A slab with a byte that was never written on (a head, or bytes left when a
 * connection ended) is simply left to the collector.
 */
import type { OnReadOpts } from "node:net";

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
const slabs = new WeakMap<ArrayBufferLike, Slab>();

/** Read options for a socket: each chunk read goes to `push`. */
export function slabReads(push: (chunk: Buffer) => void): OnReadOpts {
  let slab = takeSlab();
  return {
    buffer: () => {
      if (slab.bytes.length - slab.used < MIN_ROOM) {
        retire(slab);
        slab = takeSlab();
      }
      return slab.bytes.subarray(slab.used);
    },
    callback: (count, buffer) => {
      slab.used += count;
      slab.outstanding += count;
      push((buffer as Buffer).subarray(0, count));
      return true;
    },
  };
}

/** `chunk` (some bytes of a slab) has been written on: nothing will read it again. */
export function released(chunk: Buffer): void {
  const slab = slabs.get(chunk.buffer);
  if (!slab) return;
  slab.outstanding -= chunk.length;
  if (slab.retired && slab.outstanding === 0) recycle(slab);
}

function takeSlab(): Slab {
  const bytes = free.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES);
  const slab: Slab = { bytes, used: 0, outstanding: 0, retired: false };
  slabs.set(bytes.buffer, slab);
  return slab;
}

function retire(slab: Slab): void {
  slab.retired = true;
  if (slab.outstanding === 0) recycle(slab);
}

function recycle(slab: Slab): void {
  slabs.delete(slab.bytes.buffer);
  if (free.length < MAX_FREE) free.push(slab.bytes);
}
