/**
 * A directory held open by descriptor, and names looked up inside it. Node has no openat(); on Linux
 * `/proc/self/fd/<fd>/<name>` does the same: the kernel starts the lookup of `<name>` at the
 * directory the descriptor holds, wherever that directory has been moved since, and whatever now
 * stands at the path it was opened by. With a single component for `<name>` and a call that does not
 * follow a symlink in the last component (O_NOFOLLOW opens, lstat, unlink, rmdir, rename, mkdir,
 * symlink, readlink), nothing a command does to the tree meanwhile can point the call elsewhere.
 *
 * Directories are opened with O_PATH: walking through a directory needs only search permission,
 * as it does for a path string. All of this is Linux's; elsewhere file operations refuse to run
 * rather than fall back to path strings.
 *
 * Opening and closing these descriptors are system calls made on the event loop, not handed to
 * libuv's thread pool: an O_PATH open is a lookup of one name and nothing else (no data is read, a
 * FIFO is not waited on), a few microseconds, where a trip through the pool costs two thread
 * wake-ups — the larger part of a small file operation's time on a busy machine. A walk takes one
 * per component, so each file operation saves several.
 */
import { closeSync, constants, openSync } from "node:fs";
import { ServiceError } from "../../server-kit/service-error.ts";
import { isServerProcessEntry, serverProcessRefusal } from "./server-process.ts";

const { O_DIRECTORY, O_NOFOLLOW } = constants;
/** Linux's O_PATH (the same value on every architecture Node runs containers on); Node does not export it. */
const O_PATH = 0o10000000;

export class DirHandle {
  /** The descriptor; -1 once closed (its number may by then name another file: never close it twice). */
  #fd: number;
  /** The directory's path when it was opened (root's real path plus the components walked). */
  readonly real: string;

  private constructor(fd: number, real: string) {
    this.#fd = fd;
    this.real = real;
  }

  /**
   * Opens a trusted directory by its path: a root the operator configured, whose own ancestors no
   * command can change. Everything below it is reached with `openChild`.
   */
  static async openRoot(real: string): Promise<DirHandle> {
    if (process.platform !== "linux") {
      throw new ServiceError(
        "ISOLATION_UNAVAILABLE",
        "File operations act through directory handles (/proc/self/fd), which need Linux: run the container server on Linux",
      );
    }
    return new DirHandle(openSync(real, O_PATH | O_DIRECTORY), real);
  }

  /** `name` (one component) inside this directory as a path the kernel resolves from the descriptor. */
  at(name: string): string {
    return `/proc/self/fd/${this.#fd}/${name}`;
  }

  /** This directory itself, by descriptor (for opendir, which re-opens it for reading). */
  get self(): string {
    return `/proc/self/fd/${this.#fd}`;
  }

  /**
   * Opens the directory `name` inside this one. A symlink there is not followed: it fails with
   * ENOTDIR (or ELOOP), and the caller decides what the link may lead to. Every step into a folder
   * goes through here, so this is where the server's own /proc entries are refused (server-process.ts).
   */
  async openChild(name: string): Promise<DirHandle> {
    const real = name === "." ? this.real : `${this.real === "/" ? "" : this.real}/${name}`;
    if (await isServerProcessEntry(this.self, name)) throw serverProcessRefusal(real);
    return new DirHandle(openSync(this.at(name), O_PATH | O_DIRECTORY | O_NOFOLLOW), real);
  }

  async close(): Promise<void> {
    if (this.#fd < 0) return;
    const fd = this.#fd;
    this.#fd = -1;
    try {
      closeSync(fd);
    } catch {
      // Closing an O_PATH descriptor has nothing to flush: there is no failure to report.
    }
  }
}
