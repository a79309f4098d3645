/**
 * Opening files for the file routes, inside a directory held open (locate.ts). The open refuses a
 * symlink in the last component (O_NOFOLLOW), so the file opened is the one the walk found, or the
 * call fails; it never lands anywhere the walk did not check.
 */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { DirHandle } from "./dir-handle.ts";
import { toFileError } from "./errors.ts";
import type { Entry } from "./locate.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Opens an existing regular file for reading (never blocks on a FIFO); with its size as opened. */
export async function openForRead(entry: Entry): Promise<{ handle: FileHandle; size: number }> {
  const { input } = entry;
  let handle: FileHandle;
  try {
    handle = await open(entry.dir.at(entry.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw toFileError(error, input);
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new ServiceError("IS_A_DIRECTORY", `${input}: is a directory`, { path: input });
    if (!stats.isFile()) throw new ServiceError("INVALID_REQUEST", `${input}: not a regular file`, { path: input });
    return { handle, size: stats.size };
  } catch (error) {
    await handle.close();
    throw toFileError(error, input);
  }
}

/** Creates a new file `name` in `dir` that must not exist yet (the temporary file of an atomic write). */
export async function createExclusive(dir: DirHandle, name: string, displayPath: string, mode: number): Promise<FileHandle> {
  try {
    return await open(dir.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  } catch (error) {
    throw toFileError(error, displayPath);
  }
}
