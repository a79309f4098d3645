/**
 * The version of a tree for "did anything change since?": a digest of every covered entry's relative
 * path, type, size, modification time (in nanoseconds) and inode. Any create, delete, rename or
 * write changes it (a write moves the mtime even when the size stays), whoever made the change and
 * whether or not anything was watching; the same tree gives the same version, also after the
 * container restarted. It costs one lstat per entry, so it is bounded (WATCH_LIMITS.maxDigestEntries).
 *
 * The walk goes directory by directory through descriptors, without following symlinks, like the
 * watcher (tree-watcher.ts); excluded directories are not entered.
 */
import { createHash, type Hash } from "node:crypto";
import { lstat, readdir } from "node:fs/promises";
import type { DirHandle } from "../files/dir-handle.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { PathFilter } from "./globs.ts";

export interface TreeDigest {
  version: string;
  entries: number;
}

export interface DigestOptions {
  recursive: boolean;
  filter: PathFilter;
  maxEntries: number;
}

/** Version strings carry their scheme, so a later scheme can tell an old version apart. */
const VERSION_PREFIX = "v1:";

class Walk {
  readonly hash: Hash = createHash("sha256");
  readonly options: DigestOptions;
  entries = 0;

  constructor(options: DigestOptions) {
    this.options = options;
  }

  add(relative: string, stats: { mode: bigint; size: bigint; mtimeNs: bigint; ino: bigint }): void {
    if (++this.entries > this.options.maxEntries) {
      throw new ServiceError("WATCH_LIMIT_EXCEEDED", `more than ${this.options.maxEntries} entries to compare; look at a smaller tree or exclude some`, {
        maxEntries: this.options.maxEntries,
      });
    }
    this.hash.update(`${relative}\0${stats.mode}\0${stats.size}\0${stats.mtimeNs}\0${stats.ino}\n`);
  }
}

/** The digest of the directory held by `root` (its entries, not the directory itself). */
export async function digestDirectory(root: DirHandle, options: DigestOptions): Promise<TreeDigest> {
  const walk = new Walk(options);
  await digestInto(walk, root, "");
  return { version: VERSION_PREFIX + walk.hash.digest().subarray(0, 16).toString("base64url"), entries: walk.entries };
}

/** The digest of one entry that is not a directory (`path` as the handle names it). */
export async function digestEntry(path: string, options: DigestOptions): Promise<TreeDigest> {
  const walk = new Walk(options);
  walk.add("", await lstat(path, { bigint: true }));
  return { version: VERSION_PREFIX + walk.hash.digest().subarray(0, 16).toString("base64url"), entries: walk.entries };
}

async function digestInto(walk: Walk, dir: DirHandle, relative: string): Promise<void> {
  const names = (await readdir(dir.self)).sort();
  for (const name of names) {
    const path = relative === "" ? name : `${relative}/${name}`;
    if (walk.options.filter.excludes(path)) continue;
    let stats;
    try {
      stats = await lstat(dir.at(name), { bigint: true });
    } catch {
      continue; // gone since the listing: it is simply not part of this version
    }
    if (walk.options.filter.reports(path)) walk.add(path, stats);
    if (!stats.isDirectory() || !walk.options.recursive) continue;
    let child: DirHandle;
    try {
      child = await dir.openChild(name);
    } catch {
      continue;
    }
    try {
      await digestInto(walk, child, path);
    } finally {
      await child.close();
    }
  }
}
