/**
 * The host users containers run as. A runtime started as root gives every live container an
 * unprivileged host uid of its own (as rootless container engines do): root inside the container is
 * that uid outside, so a container's files on disk belong to it, a setuid file made inside is setuid
 * to a user who owns nothing else, root-only host files stay unreadable, and two sandboxes never
 * share a user. A runtime started as an ordinary user cannot switch users: its containers run as it.
 *
 * Each runtime lends uids of a block it leases for its lifetime (uid-lease.ts), so two runtimes on one
 * machine never lend the same uid. A uid is lent per live container and comes back when it exits,
 * but is lent again only once nothing of its last container remains (uid-leftovers.ts): no process
 * runs as it, and no setuid or setgid file of it is left in a host folder it could write. A sandbox's
 * files are made its new container's own at start (`ownTree`) when they belong to an earlier one's uid.
 */
import { lchownSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { clearSetuidFiles, idsInUse } from "./uid-leftovers.ts";
import { BLOCK_SIZE, LEASE_ROOT, leaseUidBlock, type UidBlock } from "./uid-lease.ts";

/** Far above the ranges distributions and subordinate-id files hand out. */
export const DEFAULT_UID_BASE = 2_000_000_000;

export interface HostUser {
  uid: number;
  gid: number;
  /** The host folders its container may write (readWritePaths), cleared of setuid files on release. */
  writable?: readonly string[];
}

export class HostUsers {
  readonly #base: number;
  readonly #switching: boolean;
  readonly #leaseRoot: string;
  readonly #lent = new Set<number>();
  /** uids whose setuid leftovers could not be cleared: never lent by this runtime. */
  readonly #quarantined = new Set<number>();
  /** Releases still clearing what their uid left. */
  readonly #releasing = new Set<Promise<void>>();
  #block: Promise<UidBlock> | undefined;

  constructor(base = DEFAULT_UID_BASE, switching = process.getuid?.() === 0, leaseRoot = LEASE_ROOT) {
    this.#base = base;
    this.#switching = switching;
    this.#leaseRoot = leaseRoot;
  }

  /** Whether containers get users of their own (the runtime runs as root). */
  get switching(): boolean {
    return this.#switching;
  }

  /** The first uid of this runtime's block, once leased. */
  async firstUid(): Promise<number | undefined> {
    return this.#switching ? (await this.#leased()).first : undefined;
  }

  /**
   * A free uid of this runtime's block (`preferred` when it is one), for a container that may write
   * `writable` host folders; undefined when containers run as the runtime's user. Free means: lent to
   * no live container, no process of the machine runs as it, nothing it left is waiting to be cleared.
   */
  async take(preferred?: number, writable: readonly string[] = []): Promise<HostUser | undefined> {
    if (!this.#switching) return undefined;
    const block = await this.#leased();
    const busy = idsInUse();
    const free = (uid: number) => uid >= block.first && uid < block.first + BLOCK_SIZE && !this.#lent.has(uid) && !this.#quarantined.has(uid) && !busy.has(uid);
    let uid = preferred !== undefined && free(preferred) ? preferred : undefined;
    for (let slot = 0; uid === undefined && slot < BLOCK_SIZE; slot++) if (free(block.first + slot)) uid = block.first + slot;
    if (uid === undefined) throw new Error("no free host uid for a container");
    this.#lent.add(uid);
    // Written before the container may write anything: a crash from here on leaves it for the next owner of the block.
    if (writable.length > 0) block.record(uid, writable);
    return { uid, gid: uid, writable: [...writable] };
  }

  /** Gives a uid back once its container has exited: lendable again when what it left is cleared. */
  release(user: HostUser | undefined): Promise<void> {
    if (!user || !this.#lent.has(user.uid)) return Promise.resolve();
    const writable = user.writable ?? [];
    const done = (async () => {
      try {
        if (writable.length === 0) return;
        const block = await this.#leased();
        if (await clearSetuidFiles(user.uid, writable)) block.forget(user.uid);
        else {
          this.#quarantined.add(user.uid);
          console.error(`runtime: host uid ${user.uid} left setuid or setgid files in ${writable.join(", ")} that could not be cleared: it is not lent again`);
        }
      } finally {
        this.#lent.delete(user.uid);
      }
    })();
    this.#releasing.add(done);
    void done.finally(() => this.#releasing.delete(done));
    return done;
  }

  /** Waits for releases under way, then gives the block back. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#releasing]);
    if (this.#block) (await this.#block.catch(() => undefined))?.close();
    this.#block = undefined;
  }

  /** The block, leased at the first need; what earlier holders' uids left is cleared before any is lent. */
  #leased(): Promise<UidBlock> {
    return (this.#block ??= (async () => {
      const block = leaseUidBlock(this.#base, this.#leaseRoot);
      for (const { uid, paths } of block.recorded()) {
        if (await clearSetuidFiles(uid, paths)) block.forget(uid);
        else this.#quarantined.add(uid);
      }
      return block;
    })());
  }
}

/**
 * Makes everything under `dir` belong to `user`, never following a link. Run only while no process of
 * the sandbox lives, so nothing can swap a folder under it. Everything a container makes is its own
 * user's, so a tree whose top already is `user`'s needs no walk; the top is changed last, so a walk
 * cut short is done again the next time.
 */
export function ownTree(dir: string, user: HostUser): void {
  const top = lstatSync(dir);
  if (top.uid === user.uid && top.gid === user.gid) return;
  const pending = top.isDirectory() ? readdirSync(dir).map((name) => join(dir, name)) : [];
  while (pending.length > 0) {
    const path = pending.pop()!;
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (!stats) continue;
    if (stats.uid !== user.uid || stats.gid !== user.gid) lchownSync(path, user.uid, user.gid);
    if (stats.isDirectory()) for (const name of readdirSync(path)) pending.push(join(path, name));
  }
  lchownSync(dir, user.uid, user.gid);
}
