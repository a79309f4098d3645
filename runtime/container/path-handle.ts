/**
 * Host paths handed to a container as open handles, never as path strings. A handle is opened without
 * following a link at its last step, and its real path is read back from the handle itself
 * (/proc/self/fd): what gets checked is the very object bubblewrap binds (`--bind-fd`), so a folder
 * swapped for a symlink between the check and the bind cannot bring another directory in. Handles also
 * let a container's unprivileged host user bind folders it could not walk to by path (a checkout under
 * root's 0700 home).
 */
import { closeSync, constants, openSync, readlinkSync } from "node:fs";

/** open(2)'s O_PATH on Linux: a handle to the object itself, usable for binding, not for reading. */
const O_PATH = 0o10000000;

export interface PathHandle {
  fd: number;
  /** Where the object the handle holds really is (no link in it). */
  realPath: string;
}

/** Opens `path` (a link at its last step is refused: ELOOP) and reads back where the handle really points. */
export function openPathHandle(path: string): PathHandle {
  const fd = openSync(path, O_PATH | constants.O_NOFOLLOW);
  try {
    return { fd, realPath: readlinkSync(`/proc/self/fd/${fd}`) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

export function closeHandles(handles: readonly { fd: number }[]): void {
  for (const { fd } of handles) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}
