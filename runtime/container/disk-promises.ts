/**
 * The disks a runtime has mounted, held together under the host's free space: every disk is
 * promised what its image may still take on the host (its limit less what it holds,
 * disk-allowance.ts), and the data folder's file system keeps free, at all times, what all of them
 * are promised and the service's reserve besides. So however the sandboxes write, together they
 * cannot take the service's room: a disk that reaches its limit refuses its own sandbox (ENOSPC in
 * it), and the kernel never finds the host full under an image it is writing (which would be I/O
 * errors and a file system turned read-only).
 *
 * A disk is mounted with a limit `ahead` bytes above what it uses (its whole size if that is less),
 * admitted only if the host keeps that promise; else the start is INSUFFICIENT_STORAGE (507). While
 * it runs, a watch raises its limit as its sandbox writes, to `ahead` above what it uses again, as
 * far as the host's unpromised room goes; and lowers it again when its sandbox has deleted much,
 * never below what it uses, so its room goes back to the other sandboxes and to new starts.
 *
 * A start the host seems short for is first given back what the running disks hold beyond their room
 * ahead: what a sandbox deletes comes back late on both sides (its file system counts the blocks used
 * until their discard has run, in the background after a commit; the host, until the discard has
 * punched them out of the image), so the watch may have lowered a limit on a use that was about to
 * fall, and it lowers a limit only once the room above it is twice `ahead`. Each disk is settled
 * (its journal committed and its free blocks trimmed, so its use and its image are what it holds)
 * and its limit brought down to `ahead` above that; only then is the start refused, on exact numbers.
 */
import { execFile } from "node:child_process";
import { statfsSync } from "node:fs";
import { promisify } from "node:util";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { DiskAllowance } from "./disk-allowance.ts";

/**
 * How often the watch reads the disks' use: the room `ahead` of a disk must last a sandbox writing
 * as fast as it can (page-cache speed, about a gigabyte a second here) until the next look, else it
 * meets ENOSPC while the host has room. Each look is one statfs per mounted disk.
 */
const WATCH_INTERVAL_MS = 50;

/**
 * Kept free on the data folder's file system for the service's own state (the Worker's storage and
 * snapshots, the runtime's files) whatever the sandboxes are promised: this share of the file
 * system, at most SERVICE_RESERVE_MAX_BYTES.
 */
const SERVICE_RESERVE_SHARE = 0.05;
const SERVICE_RESERVE_MAX_BYTES = 1024 ** 3;

/** How long a start the host seems short for waits for the machine's writes to be committed, at most. */
const SETTLE_SYNC_TIMEOUT_MS = 10_000;

export class DiskPromises {
  readonly #dataDir: string;
  /** Room kept ahead of what a running disk uses. */
  readonly #ahead: number;
  /** Bytes root may write beyond a disk's sandbox (made with the disk). */
  readonly #rootReserve: number;
  /** The mounted disks, by image. */
  readonly #disks = new Map<string, DiskAllowance>();
  #watch: NodeJS.Timeout | undefined;
  readonly #fstrim: string | undefined;

  /** `fstrim`: where the program is (undefined: none; a settled disk is then only committed). */
  constructor(dataDir: string, ahead: number, rootReserve: number, fstrim?: string) {
    this.#dataDir = dataDir;
    this.#fstrim = fstrim;
    this.#ahead = ahead;
    this.#rootReserve = rootReserve;
  }

  get ahead(): number {
    return this.#ahead;
  }

  /**
   * Gives a disk just mounted its limit, `ahead` (and `extra`, room it needs at once) above what it
   * uses, and counts it; or refuses it (INSUFFICIENT_STORAGE, nothing counted) where the host cannot
   * keep that promise with every other, once the others are settled. `force`: counted whatever the
   * host has (a disk found mounted).
   */
  async admit(disk: DiskAllowance, extra = 0, force = false): Promise<void> {
    const limit = Math.min(disk.max, disk.usage().used + this.#rootReserve + this.#ahead + extra);
    const previous = disk.limit;
    disk.set(limit);
    if (!force && this.#shortfall(disk).short) await this.#settle();
    // Checked and counted in one turn: a start admitted meanwhile is among the others here.
    const { short, reason } = this.#shortfall(disk);
    if (!force && short) {
      disk.set(previous);
      throw new ServiceError("INSUFFICIENT_STORAGE", reason);
    }
    this.#disks.set(disk.image, disk);
    this.#watch ??= setInterval(() => this.#look(), WATCH_INTERVAL_MS).unref();
  }

  /** Whether the host keeps `disk`'s promise with every other counted one, and if not, why. */
  #shortfall(disk: DiskAllowance): { short: boolean; reason: string } {
    const { free, reserve } = this.#host();
    const others = [...this.#disks.values()].filter((other) => other.image !== disk.image);
    const together = others.reduce((sum, other) => sum + other.promised(), disk.promised());
    return {
      short: free - reserve < together,
      reason: `no room on the host's disk for another sandbox: ${mib(free)} free, of which ${mib(reserve)} kept for the service and ${mib(together)} promised to the disks of ${others.length + 1} sandboxes (this one's included)`,
    };
  }

  /**
   * Every counted disk made to hold what its sandbox holds, and no more room than `ahead` above it:
   * its journal committed, then its free blocks trimmed (which waits until the host has them back),
   * then its limit lowered to its target where it is above.
   *
   * The journals are committed with one `sync` of every file system, not one per counted disk: a disk
   * released a moment ago (its sandbox stopped) is no longer counted or reachable by its path, but
   * until its journal commits, what its sandbox deleted last is still held in its image on the host
   * (lazily unmounted, its last commit waits for the kernel to tear it down).
   */
  async #settle(): Promise<void> {
    await execFileAsync("sync", [], { timeout: SETTLE_SYNC_TIMEOUT_MS }).catch(() => undefined);
    await Promise.all(
      [...this.#disks.values()].map(async (disk) => {
        // Each step on its own: a disk that cannot be trimmed is still brought down to what it uses.
        if (this.#fstrim !== undefined) await execFileAsync(this.#fstrim, [disk.dir]).catch(() => undefined);
        try {
          const target = Math.min(disk.max, disk.usage().used + this.#rootReserve + this.#ahead);
          if (target < disk.limit) disk.set(target);
        } catch {
          // Unmounted meanwhile: its release takes it out.
        }
      }),
    );
  }

  /** The disk of `image` counted as `renamed` at `dir` (a warm container's disk become a sandbox's), or no longer (unmounted). */
  recount(image: string, renamed?: { image: string; dir: string }): void {
    const disk = this.#disks.get(image);
    if (disk === undefined) return;
    this.#disks.delete(image);
    if (renamed !== undefined) {
      disk.image = renamed.image;
      disk.dir = renamed.dir;
      this.#disks.set(renamed.image, disk);
    }
    if (this.#disks.size === 0 && this.#watch !== undefined) {
      clearInterval(this.#watch);
      this.#watch = undefined;
    }
  }

  /** One look at every disk: a limit raised where its sandbox has written into its room, as far as the host allows; lowered where it has deleted. */
  #look(): void {
    let room: number | undefined;
    for (const disk of this.#disks.values()) {
      try {
        const { used, available } = disk.usage();
        const target = Math.min(disk.max, used + this.#rootReserve + this.#ahead);
        if (available < this.#ahead / 2 && target > disk.limit) {
          // The host's unpromised room, found once per look and spent as it is given.
          room ??= this.#unpromised();
          const raise = Math.min(target - disk.limit, room);
          if (raise <= 0) continue;
          disk.set(disk.limit + raise);
          room -= raise;
        } else if (available > 2 * this.#ahead && target < disk.limit) {
          disk.set(target);
        }
      } catch {
        // Unmounted meanwhile: its release takes it out.
      }
    }
  }

  /** Bytes of the host's free space neither kept for the service nor promised to a disk. */
  #unpromised(): number {
    const { free, reserve } = this.#host();
    return free - reserve - [...this.#disks.values()].reduce((sum, disk) => sum + disk.promised(), 0);
  }

  #host(): { free: number; reserve: number } {
    const found = statfsSync(this.#dataDir);
    const free = Number(found.bavail) * Number(found.bsize);
    const reserve = Math.min(SERVICE_RESERVE_MAX_BYTES, Math.floor(Number(found.blocks) * Number(found.bsize) * SERVICE_RESERVE_SHARE));
    return { free, reserve };
  }
}

const execFileAsync = promisify(execFile);

function mib(bytes: number): string {
  return `${Math.max(0, Math.round(bytes / 1024 ** 2))} MiB`;
}
