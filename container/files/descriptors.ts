/**
 * Opening files for the file routes. The path was checked before the open; the open refuses a symlink
 * in the last component (O_NOFOLLOW) and afterwards the descriptor's real path is checked again, so a
 * symlink swapped in between the check and the open cannot lead outside the workspace.
 */
import { constants } from "node:fs";
import { open, readlink, type FileHandle } from "node:fs/promises";
import { ServiceError } from "../../server-kit/service-error.ts";
import { toFileError } from "./errors.ts";
import type { Access, PathPolicy } from "./paths.ts";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Opens an existing regular file for reading (never blocks on a FIFO). */
export async function openForRead(policy: PathPolicy, realPath: string, displayPath: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(realPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    throw toFileError(error, displayPath);
  }
  try {
    await verifyDescriptor(policy, handle, "read", displayPath);
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new ServiceError("IS_A_DIRECTORY", `${displayPath}: is a directory`, { path: displayPath });
    if (!stats.isFile()) throw new ServiceError("INVALID_REQUEST", `${displayPath}: not a regular file`, { path: displayPath });
    return handle;
  } catch (error) {
    await handle.close();
    throw toFileError(error, displayPath);
  }
}

/** Creates a new file that must not exist yet (the temporary file of an atomic write). */
export async function createExclusive(
  policy: PathPolicy,
  realPath: string,
  displayPath: string,
  mode: number,
): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(realPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  } catch (error) {
    throw toFileError(error, displayPath);
  }
  try {
    await verifyDescriptor(policy, handle, "write", displayPath);
    return handle;
  } catch (error) {
    await handle.close();
    throw toFileError(error, displayPath);
  }
}

/** Where an open descriptor really points (Linux): the last word on containment. */
async function verifyDescriptor(policy: PathPolicy, handle: FileHandle, access: Access, displayPath: string): Promise<void> {
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (real !== undefined && real.startsWith("/") && !policy.allows(real, access)) {
    throw new ServiceError("PATH_OUTSIDE_WORKSPACE", `${displayPath}: access denied, the file lies outside the workspace`, {
      path: displayPath,
    });
  }
}
