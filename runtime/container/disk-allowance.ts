/**
 * What a mounted sandbox disk may hold: its limit, the bytes of its file system (metadata included)
 * that may be in use, set through the kernel while it is mounted. Its image is sparse and takes on
 * the host only the blocks its file system has in use, so the limit bounds what the image can take
 * on the host, whatever the disk's size; the runtime raises it as the sandbox writes, while the
 * host has room (disk-promises.ts).
 *
 * The limit is ext4's reserved clusters (`/sys/fs/ext4/<device>/reserved_clusters`): blocks no
 * allocation may take but the file system's own (splitting an extent), root's included. Set in the
 * kernel's memory, at once, nothing written to the disk, any value below the disk's size. Root's
 * reserved blocks (`tune2fs -r`, which does take effect at once on a mounted disk) would not do:
 * tune2fs and mkfs refuse to keep more than half of a disk, they rewrite the superblock under the
 * mounted file system, and a sandbox run as root would pass them. The root reserve the disk was
 * made with (ROOT_RESERVE_BYTES) stays on top: the runtime still lays out a layer on a disk the
 * sandbox filled up to its limit.
 */
import { readFileSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { basename } from "node:path";

/**
 * The kernel's own reserve on a disk it mounts: 2% of its clusters, at most 4096. Never given
 * away: the file system keeps room for what it must write itself as a disk fills.
 */
function kernelReserve(clusters: number): number {
  return Math.min(Math.floor(clusters / 50), 4096);
}

export class DiskAllowance {
  /** The disk's image on the host (renamed when a warm container's disk becomes a sandbox's). */
  image: string;
  /** Where it is mounted. */
  dir: string;
  readonly #control: string;
  /** Its device: what is mounted at `dir` is it only while this is the folder's. */
  readonly #device: number;
  /** Bytes of the disk (of its image). */
  readonly #size: number;
  readonly #blockSize: number;
  /** Bytes the file system may have in use at most: all but the kernel's own reserve. */
  readonly max: number;
  /** Bytes the file system may have in use now, as last set. */
  limit: number;

  /** The allowance of the disk of `image` mounted at `dir`, as the kernel has it now. */
  constructor(image: string, dir: string) {
    this.image = image;
    this.dir = dir;
    this.#control = `/sys/fs/ext4/${basename(mountSource(dir))}/reserved_clusters`;
    this.#device = statSync(dir).dev;
    this.#size = statSync(image).size;
    this.#blockSize = Number(statfsSync(dir).bsize);
    const clusters = Math.floor(this.#size / this.#blockSize);
    this.max = (clusters - kernelReserve(clusters)) * this.#blockSize;
    this.limit = this.#size - Number(readFileSync(this.#control, "utf8").trim()) * this.#blockSize;
  }

  /** Bytes of the file system in use (its metadata, what is written and what is being written), and bytes its sandbox may still write. */
  usage(): { used: number; available: number } {
    // Read only while it is mounted there: not while it moves (a warm container's disk adopted) or once it is gone.
    const found = this.#mountedHere() && statfsSync(this.dir);
    if (!found || !this.#mountedHere()) throw new Error(`the disk of ${this.image} is not mounted at ${this.dir}`);
    return { used: this.#size - Number(found.bfree) * this.#blockSize, available: Number(found.bavail) * this.#blockSize };
  }

  #mountedHere(): boolean {
    return statSync(this.dir, { throwIfNoEntry: false })?.dev === this.#device;
  }

  /** Sets the bytes the file system may have in use (at most `max`): at once, for every write after. */
  set(limit: number): void {
    const bounded = Math.min(this.max, Math.max(0, limit));
    const reserved = Math.floor((this.#size - bounded) / this.#blockSize);
    writeFileSync(this.#control, `${reserved}\n`);
    this.limit = this.#size - reserved * this.#blockSize;
  }

  /** Bytes its image may still take on the host: up to its limit, less what it holds. */
  promised(): number {
    const held = (statSync(this.image, { throwIfNoEntry: false })?.blocks ?? 0) * 512;
    return Math.max(0, this.limit - held);
  }
}

/** The device mounted at `dir` (the last mount there), as /proc/self/mountinfo names it. */
function mountSource(dir: string): string {
  const line = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((entry) => unescapeMountPath(entry.split(" ")[4] ?? "") === dir)
    .at(-1);
  const source = line?.split(" - ")[1]?.split(" ")[1];
  if (source === undefined) throw new Error(`no disk is mounted at ${dir}`);
  return unescapeMountPath(source);
}

/** A path as mountinfo writes it, its octal escapes undone. */
export function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
