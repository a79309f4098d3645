/**
 * The host users containers run as. A runtime started as root gives every live container an
 * unprivileged host uid of its own (as rootless container engines do): root inside the container is
 * that uid outside, so a container's files on disk belong to it, a setuid file made inside is setuid
 * to a user who owns nothing else, root-only host files stay unreadable, and two sandboxes never
 * share a user. A runtime started as an ordinary user cannot switch users: its containers run as it.
 *
 * uids are lent per live container and come back when it exits; a sandbox's files are made its new
 * container's own at start (`ownTree`) when they belong to an earlier one's uid.
 */
import { lchownSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Far above the ranges distributions and subordinate-id files hand out. */
export const DEFAULT_UID_BASE = 2_000_000_000;
const RANGE = 65_536;

export interface HostUser {
  uid: number;
  gid: number;
}

export class HostUsers {
  readonly #base: number;
  readonly #lent = new Set<number>();
  readonly #switching: boolean;

  constructor(base = DEFAULT_UID_BASE, switching = process.getuid?.() === 0) {
    this.#base = base;
    this.#switching = switching;
  }

  /** Whether containers get users of their own (the runtime runs as root). */
  get switching(): boolean {
    return this.#switching;
  }

  /** A free uid (`preferred` when it is free and in range); undefined when containers run as the runtime's user. */
  take(preferred?: number): HostUser | undefined {
    if (!this.#switching) return undefined;
    let uid = preferred !== undefined && this.#inRange(preferred) && !this.#lent.has(preferred) ? preferred : undefined;
    for (let slot = 0; uid === undefined && slot < RANGE; slot++) if (!this.#lent.has(this.#base + slot)) uid = this.#base + slot;
    if (uid === undefined) throw new Error("no free host uid for a container");
    this.#lent.add(uid);
    return { uid, gid: uid };
  }

  release(user: HostUser | undefined): void {
    if (user) this.#lent.delete(user.uid);
  }

  #inRange(uid: number): boolean {
    return uid >= this.#base && uid < this.#base + RANGE;
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
