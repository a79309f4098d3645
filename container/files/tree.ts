/**
 * Whole trees, walked by directory handles: removing one (delete with `recursive`) and copying one
 * to another filesystem (a move across mounts). Each directory is opened inside its parent without
 * following symlinks and its entries are acted on inside it, so a directory swapped for a symlink
 * midway is removed or copied as the link it now is, never followed.
 */
import { constants } from "node:fs";
import { copyFile, lstat, lutimes, mkdir, open, readdir, readlink, rmdir, symlink, unlink } from "node:fs/promises";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { DirHandle } from "./dir-handle.ts";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, COPYFILE_EXCL } = constants;

/** Removes `name` inside `parent`, with everything below it when it is a directory. */
export async function removeTree(parent: DirHandle, name: string): Promise<void> {
  let dir: DirHandle;
  try {
    dir = await parent.openChild(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOTDIR" && code !== "ELOOP") throw error;
    await unlink(parent.at(name)); // a file or a symlink: the link itself goes
    return;
  }
  try {
    for (const child of await readdir(dir.self)) {
      await removeTree(dir, child).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error; // gone meanwhile: fine
      });
    }
  } finally {
    await dir.close();
  }
  await rmdir(parent.at(name));
}

/**
 * Copies `sourceName` inside `sourceDir` to the new name `destinationName` inside `destinationDir`:
 * directories with their entries, files with their mode and times, symlinks as links.
 */
export async function copyTree(sourceDir: DirHandle, sourceName: string, destinationDir: DirHandle, destinationName: string): Promise<void> {
  const from = sourceDir.at(sourceName);
  const to = destinationDir.at(destinationName);
  const stats = await lstat(from);
  if (stats.isSymbolicLink()) {
    await symlink(await readlink(from), to);
  } else if (stats.isDirectory()) {
    const source = await sourceDir.openChild(sourceName);
    try {
      await mkdir(to, { mode: stats.mode & 0o7777 });
      const destination = await destinationDir.openChild(destinationName);
      try {
        for (const child of await readdir(source.self)) await copyTree(source, child, destination, child);
      } finally {
        await destination.close();
      }
    } finally {
      await source.close();
    }
  } else if (stats.isFile()) {
    // The copy reads the file opened here (O_NOFOLLOW), by its descriptor; it creates a new name only.
    const file = await open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    try {
      if (!(await file.stat()).isFile()) throw specialFile(sourceName);
      await copyFile(`/proc/self/fd/${file.fd}`, to, COPYFILE_EXCL);
    } finally {
      await file.close();
    }
  } else {
    throw specialFile(sourceName);
  }
  await lutimes(to, stats.atime, stats.mtime);
}

function specialFile(name: string): ServiceError {
  return new ServiceError("INVALID_REQUEST", `${name}: a device, FIFO or socket cannot be moved to another filesystem`, { path: name });
}
