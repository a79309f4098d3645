/**
 * Watches a directory tree with one inotify watch per directory (Node's fs.watch on the directory,
 * not recursive) and reports what changed as create / modify / delete with paths relative to the
 * watched root.
 *
 * Why not `fs.watch(root, { recursive: true })`: on Linux Node builds it by stat-ing and watching
 * every file of the tree synchronously at start, reports every file already there as an event, and
 * cannot skip an excluded tree (node_modules would be walked and watched whole). Here only
 * directories are watched, excluded ones are never entered, and the walk is asynchronous.
 *
 * Every directory is held open by descriptor, reached from its parent's descriptor without
 * following symlinks (container/files/dir-handle.ts), and watched and read through that descriptor:
 * a command that swaps a directory for a symlink cannot make the watch look outside the tree.
 * Symlinks are reported as entries, never followed.
 *
 * inotify tells "a name appeared or went away" without pairing the two ends of a move, so a rename
 * is reported as a delete of the old name and a create of the new. Whether a name is new is told by
 * the entries known per directory. Changes are handled one at a time, in the order they came.
 */
import { watch, type FSWatcher } from "node:fs";
import { lstat, readdir, stat } from "node:fs/promises";
import type { WatchChangeKind } from "../../protocol/watch.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { DirHandle } from "../files/dir-handle.ts";
import type { PathFilter } from "./globs.ts";

export interface WatchChange {
  kind: WatchChangeKind;
  /** Relative to the watched root, `/`-separated. */
  path: string;
  isDirectory: boolean;
}

export interface TreeWatcherOptions {
  recursive: boolean;
  filter: PathFilter;
  maxDirectories: number;
  onChange(change: WatchChange): void;
  /** The watch ended by itself: the root went away, or the tree outgrew the limit. Called once. */
  onEnd(end: { reason: string } | { error: ServiceError }): void;
}

interface WatchedDirectory {
  handle: DirHandle;
  watcher: FSWatcher;
  /** Entries known to be there: name → is a directory. */
  entries: Map<string, boolean>;
}

const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

export class TreeWatcher {
  readonly #options: TreeWatcherOptions;
  readonly #dirs = new Map<string, WatchedDirectory>();
  #chain: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(options: TreeWatcherOptions) {
    this.#options = options;
  }

  /** Watches `root` (a directory held open; the watcher takes it over). WATCH_LIMIT_EXCEEDED for a tree too big. */
  static async start(root: DirHandle, options: TreeWatcherOptions): Promise<TreeWatcher> {
    const watcher = new TreeWatcher(options);
    try {
      await watcher.#add("", root, false);
    } catch (error) {
      watcher.close();
      throw error;
    }
    return watcher;
  }

  /** How many directories are watched. */
  get directories(): number {
    return this.#dirs.size;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const dir of this.#dirs.values()) this.#release(dir);
    this.#dirs.clear();
  }

  #release(dir: WatchedDirectory): void {
    dir.watcher.close();
    void dir.handle.close();
  }

  /** Watches one directory and records (reporting, when `report`) what is in it, then its subdirectories. */
  async #add(relative: string, handle: DirHandle, report: boolean): Promise<void> {
    if (this.#closed) return void handle.close();
    if (this.#dirs.size >= this.#options.maxDirectories) {
      void handle.close();
      throw new ServiceError("WATCH_LIMIT_EXCEEDED", `the watched tree has more than ${this.#options.maxDirectories} directories; watch a smaller one or exclude some`, {
        maxDirectories: this.#options.maxDirectories,
      });
    }
    let watcher: FSWatcher;
    try {
      watcher = watch(handle.self, { persistent: false }, (eventType, name) => this.#enqueue(relative, eventType, name));
    } catch (error) {
      void handle.close();
      if ((error as NodeJS.ErrnoException).code === "ENOSPC") {
        throw new ServiceError("WATCH_LIMIT_EXCEEDED", "the system's limit of inotify watches is reached", { errno: "ENOSPC" });
      }
      throw error;
    }
    const dir: WatchedDirectory = { handle, watcher, entries: new Map() };
    watcher.on("error", () => this.#forget(relative));
    this.#dirs.set(relative, dir);
    // Read after the watch is in place, so an entry made meanwhile is seen one way or the other.
    const names = await readdir(handle.self, { withFileTypes: true }).catch(() => []);
    for (const entry of names) {
      const path = join(relative, entry.name);
      if (this.#options.filter.excludes(path) || dir.entries.has(entry.name)) continue;
      const isDirectory = entry.isDirectory();
      dir.entries.set(entry.name, isDirectory);
      if (report) this.#report("create", path, isDirectory);
      if (isDirectory && this.#options.recursive) await this.#enter(dir, relative, entry.name, report);
    }
  }

  async #enter(parent: WatchedDirectory, relative: string, name: string, report: boolean): Promise<void> {
    let child: DirHandle;
    try {
      child = await parent.handle.openChild(name);
    } catch {
      return; // gone again, or replaced by something that is not a directory: its own event follows
    }
    await this.#add(join(relative, name), child, report);
  }

  #enqueue(relative: string, eventType: string, name: string | Buffer | null): void {
    if (this.#closed) return;
    this.#chain = this.#chain
      .then(() => this.#handle(relative, eventType, name === null ? null : String(name)))
      .catch((error: unknown) => this.#end({ error: error instanceof ServiceError ? error : new ServiceError("INTERNAL_ERROR", `watch failed: ${String(error)}`) }));
  }

  async #handle(relative: string, eventType: string, name: string | null): Promise<void> {
    const dir = this.#dirs.get(relative);
    if (this.#closed || !dir) return;
    if (name === null) return this.#rescan(relative, dir);
    const path = join(relative, name);
    if (this.#options.filter.excludes(path)) return;
    const known = dir.entries.get(name);
    let isDirectory: boolean | undefined;
    let replaced = false;
    try {
      const current = await lstat(dir.handle.at(name));
      isDirectory = current.isDirectory();
      // A directory removed and made again under the same name is a new one: the old watch is on the old one.
      if (known === true && isDirectory && eventType === "rename") replaced = await this.#watchesOtherThan(path, current.ino);
    } catch {
      isDirectory = undefined;
    }
    if (isDirectory === undefined) {
      // Unknown: it came and went before it was looked at (or it is the root itself, going away).
      if (known !== undefined) this.#removed(dir, relative, name, known);
      if (relative === "" && (await this.#rootGone(dir))) this.#end({ reason: "the watched directory was removed" });
      return;
    }
    const changedType = known !== undefined && (known !== isDirectory || replaced);
    if (changedType) this.#removed(dir, relative, name, known);
    if (known === undefined || changedType) {
      dir.entries.set(name, isDirectory);
      this.#report("create", path, isDirectory);
      if (isDirectory && this.#options.recursive) await this.#enter(dir, relative, name, true);
      return;
    }
    // Known and still there: written to, or replaced by a rename over it.
    if (!isDirectory) this.#report("modify", path, false);
  }

  /** The kernel lost track of names (its queue overflowed): compare what is there with what was known. */
  async #rescan(relative: string, dir: WatchedDirectory): Promise<void> {
    const names = await readdir(dir.handle.self, { withFileTypes: true }).catch(() => []);
    const present = new Map(names.filter((e) => !this.#options.filter.excludes(join(relative, e.name))).map((e) => [e.name, e.isDirectory()]));
    for (const [name, wasDirectory] of [...dir.entries]) if (!present.has(name)) this.#removed(dir, relative, name, wasDirectory);
    for (const [name, isDirectory] of present) {
      if (dir.entries.has(name)) continue;
      dir.entries.set(name, isDirectory);
      this.#report("create", join(relative, name), isDirectory);
      if (isDirectory && this.#options.recursive) await this.#enter(dir, relative, name, true);
    }
  }

  #removed(dir: WatchedDirectory, relative: string, name: string, wasDirectory: boolean): void {
    dir.entries.delete(name);
    const path = join(relative, name);
    if (wasDirectory) this.#forget(path);
    this.#report("delete", path, wasDirectory);
  }

  /** Stops watching a directory and everything watched below it. */
  #forget(relative: string): void {
    for (const [path, dir] of [...this.#dirs]) {
      if (path === relative || path.startsWith(`${relative}/`) || relative === "") {
        this.#release(dir);
        this.#dirs.delete(path);
      }
    }
    if (relative === "") this.#end({ reason: "the watched directory can no longer be watched" });
  }

  /** True when the directory watched at `path` is not (any more) the one with inode `ino`. */
  async #watchesOtherThan(path: string, ino: number): Promise<boolean> {
    const watched = this.#dirs.get(path);
    if (!watched) return this.#options.recursive;
    try {
      return (await stat(watched.handle.self)).ino !== ino;
    } catch {
      return true;
    }
  }

  async #rootGone(root: WatchedDirectory): Promise<boolean> {
    try {
      return (await stat(root.handle.self)).nlink === 0;
    } catch {
      return true;
    }
  }

  #report(kind: WatchChangeKind, path: string, isDirectory: boolean): void {
    if (!this.#closed && this.#options.filter.reports(path)) this.#options.onChange({ kind, path, isDirectory });
  }

  #end(end: { reason: string } | { error: ServiceError }): void {
    if (this.#closed) return;
    this.close();
    this.#options.onEnd(end);
  }
}
