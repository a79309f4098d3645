/**
 * A block of host uids leased to one runtime for as long as it lives, so that no two runtimes on a
 * machine (two stacks, two checkouts, a test run beside a stack) ever lend the same uid. A runtime
 * lends uids of its own block only.
 *
 * The lease is an flock on `<block's first uid>.lock` in a folder only root may write
 * (/run/edge-sandbox/host-uids). flock belongs to the open file, which the runtime keeps open (Node
 * opens every file close-on-exec, so no child inherits it): when the runtime exits or crashes, the
 * kernel closes it and the block is free again, with nothing to clean up by hand. Node has no flock of
 * its own; util-linux's `flock` locks the descriptor it is handed and exits, and the lock stays with
 * the runtime's open file.
 *
 * Beside each lock, a folder of records (`<first uid>/<uid>.json`): the host paths a lent uid could
 * write, kept until what it may have left there is cleared (uid-leftovers.ts), so a crashed runtime's
 * next owner of the block clears them before lending those uids again.
 */
import { spawnSync } from "node:child_process";
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Where leases are kept: memory (gone at reboot, as every process they guard is), root's alone. */
export const LEASE_ROOT = "/run/edge-sandbox/host-uids";
/** uids per block: as many as a user namespace could map, and far more than a runtime's sandboxes. */
export const BLOCK_SIZE = 65_536;
/** The highest uid the kernel lends (2^32 - 2: -1 means none). */
const LAST_UID = 4_294_967_294;
/** flock's answer when another holds the lock (chosen here: flock(1) exits 1 by default, as for any error). */
const HELD_ELSEWHERE = 75;

export interface UidBlock {
  first: number;
  /** uids lent before, whose records still wait for their leftovers to be cleared. */
  recorded(): { uid: number; paths: string[] }[];
  record(uid: number, paths: readonly string[]): void;
  forget(uid: number): void;
  /** Gives the block back (the runtime's exit does the same). */
  close(): void;
}

/** Leases the first free block at or above `base` (aligned to BLOCK_SIZE, so runtimes of any base share one division). */
export function leaseUidBlock(base: number, root = LEASE_ROOT): UidBlock {
  ensureRootOnly(root);
  for (let first = Math.ceil(base / BLOCK_SIZE) * BLOCK_SIZE; first + BLOCK_SIZE - 1 <= LAST_UID; first += BLOCK_SIZE) {
    const fd = openSync(join(root, `${first}.lock`), constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    const locked = spawnSync("flock", ["--exclusive", "--nonblock", "--conflict-exit-code", String(HELD_ELSEWHERE), "3"], {
      stdio: ["ignore", "ignore", "pipe", fd],
      encoding: "utf8",
    });
    if (locked.status === 0) return block(fd, first, join(root, String(first)));
    closeSync(fd);
    if (locked.status !== HELD_ELSEWHERE) {
      throw new Error(`could not lease host uids (flock: ${locked.error?.message ?? locked.stderr.trim() ?? `exit ${locked.status}`}): apt-get install util-linux`);
    }
  }
  throw new Error(`every block of host uids from ${base} up is leased by another runtime`);
}

function block(fd: number, first: number, records: string): UidBlock {
  mkdirSync(records, { recursive: true, mode: 0o700 });
  const file = (uid: number) => join(records, `${uid}.json`);
  return {
    first,
    recorded() {
      const found: { uid: number; paths: string[] }[] = [];
      for (const name of readdirSync(records)) {
        const uid = Number(name.replace(/\.json$/, ""));
        if (!Number.isInteger(uid)) continue;
        try {
          const paths = JSON.parse(readFileSync(join(records, name), "utf8")) as unknown;
          found.push({ uid, paths: Array.isArray(paths) ? paths.filter((path): path is string => typeof path === "string") : [] });
        } catch {
          found.push({ uid, paths: [] }); // cut short by a crash: nothing was lent with it yet
        }
      }
      return found;
    },
    record(uid, paths) {
      writeFileSync(file(uid), JSON.stringify(paths), { mode: 0o600 });
    },
    forget(uid) {
      rmSync(file(uid), { force: true });
    },
    close() {
      closeSync(fd);
    },
  };
}

/** Makes `root` (and its parents) if missing, and refuses a folder anyone but root could have changed. */
function ensureRootOnly(root: string): void {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  let path = root;
  while (path !== "/") {
    const stats = lstatSync(path);
    if (!stats.isDirectory() || stats.uid !== 0 || (stats.mode & 0o022 && !(stats.mode & 0o1000))) {
      throw new Error(`${path} must be a folder only root may write (host uid leases are kept under it)`);
    }
    path = join(path, "..");
  }
}
