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
 */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { ServiceError } from "../../server-kit/service-error.ts";
import { isServerProcessEntry, serverProcessRefusal } from "./server-process.ts";

const { O_DIRECTORY, O_NOFOLLOW } = constants;
/** Linux's O_PATH (the same value on every architecture Node runs containers on); Node does not export it. */
const O_PATH = 0o10000000;

export class DirHandle {
  readonly #handle: FileHandle;
  /** The directory's path when it was opened (root's real path plus the components walked). */
  readonly real: string;

  private constructor(handle: FileHandle, real: string) {
    this.#handle = handle;
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
    return new DirHandle(await open(real, O_PATH | O_DIRECTORY), real);
  }

  /** `name` (one component) inside this directory as a path the kernel resolves from the descriptor. */
  at(name: string): string {
    return `/proc/self/fd/${this.#handle.fd}/${name}`;
  }

  /** This directory itself, by descriptor (for opendir, which re-opens it for reading). */
  get self(): string {
    return `/proc/self/fd/${this.#handle.fd}`;
  }

  /**
   * Opens the directory `name` inside this one. A symlink there is not followed: it fails with
   * ENOTDIR (or ELOOP), and the caller decides what the link may lead to. Every step into a folder
   * goes through here, so this is where the server's own /proc entries are refused (server-process.ts).
   */
  async openChild(name: string): Promise<DirHandle> {
    const real = name === "." ? this.real : `${this.real === "/" ? "" : this.real}/${name}`;
    if (await isServerProcessEntry(this.self, name)) throw serverProcessRefusal(real);
    return new DirHandle(await open(this.at(name), O_PATH | O_DIRECTORY | O_NOFOLLOW), real);
  }

  async close(): Promise<void> {
    await this.#handle.close().catch(() => undefined);
  }
}
