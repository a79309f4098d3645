/**
 * Directory and entry operations: mkdir, delete, rename, move, exists. Operations on an entry itself
 * (delete, rename, move) do not follow a symlink in its last component: deleting a link removes the
 * link, wherever it points.
 */
import { cp, lstat, mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { FileType } from "../../protocol/files.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { toFileError } from "./errors.ts";
import { fileTypeOf } from "./list.ts";
import type { PathPolicy, ResolvedPath } from "./paths.ts";

export async function makeDirectory(
  policy: PathPolicy,
  input: string,
  options: { recursive?: boolean; mode?: number } = {},
): Promise<{ path: string; created: boolean }> {
  const target = await policy.resolve(input, "write");
  try {
    if (options.recursive) {
      const existing = await stat(target.real).catch(() => undefined);
      if (existing && !existing.isDirectory()) throw new ServiceError("FILE_EXISTS", `${input}: exists and is not a directory`, { path: input });
      const first = await mkdir(target.real, { recursive: true, ...(options.mode === undefined ? {} : { mode: options.mode }) });
      return { path: target.display, created: first !== undefined };
    }
    await mkdir(target.real, options.mode === undefined ? {} : { mode: options.mode });
    return { path: target.display, created: true };
  } catch (error) {
    throw toFileError(error, input);
  }
}

export async function deleteEntry(policy: PathPolicy, input: string, options: { recursive?: boolean } = {}): Promise<{ path: string }> {
  const target = await policy.resolve(input, "write", { followFinal: false });
  refuseRoot(target, input, "delete");
  try {
    const stats = await lstat(target.real);
    if (stats.isDirectory() && !options.recursive) {
      throw new ServiceError("IS_A_DIRECTORY", `${input}: is a directory (pass recursive: true to delete it)`, { path: input });
    }
    await rm(target.real, { recursive: stats.isDirectory(), force: false });
    return { path: target.display };
  } catch (error) {
    throw toFileError(error, input);
  }
}

/** Renames `oldPath` to exactly `newPath`. */
export async function renameEntry(
  policy: PathPolicy,
  oldPath: string,
  newPath: string,
  options: { overwrite?: boolean } = {},
): Promise<{ oldPath: string; newPath: string }> {
  const source = await policy.resolve(oldPath, "write", { followFinal: false });
  const destination = await policy.resolve(newPath, "write", { followFinal: false });
  await relocate(source, destination, oldPath, newPath, options.overwrite ?? false);
  return { oldPath: source.display, newPath: destination.display };
}

/** `mv`: into `destinationPath` when it is an existing directory, else to it. */
export async function moveEntry(
  policy: PathPolicy,
  sourcePath: string,
  destinationPath: string,
  options: { overwrite?: boolean } = {},
): Promise<{ sourcePath: string; destinationPath: string }> {
  const source = await policy.resolve(sourcePath, "write", { followFinal: false });
  const named = await policy.resolve(destinationPath, "write");
  const isDirectory = (await stat(named.real).catch(() => undefined))?.isDirectory() ?? false;
  const destinationInput = isDirectory ? path.join(named.real, path.basename(source.real)) : destinationPath;
  const destination = await policy.resolve(destinationInput, "write", { followFinal: false });
  const display = isDirectory ? path.join(named.display, path.basename(source.display)) : destination.display;
  await relocate(source, destination, sourcePath, destinationPath, options.overwrite ?? false);
  return { sourcePath: source.display, destinationPath: display };
}

export async function entryExists(policy: PathPolicy, input: string): Promise<{ path: string; exists: boolean; type?: FileType }> {
  const target = await policy.resolve(input, "read");
  try {
    const stats = await stat(target.real);
    return { path: target.display, exists: true, type: fileTypeOf(stats) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { path: target.display, exists: false };
    throw toFileError(error, input);
  }
}

async function relocate(source: ResolvedPath, destination: ResolvedPath, sourceInput: string, destinationInput: string, overwrite: boolean): Promise<void> {
  refuseRoot(source, sourceInput, "move");
  refuseRoot(destination, destinationInput, "replace");
  try {
    await lstat(source.real);
    if (source.real === destination.real) return;
    const existing = await lstat(destination.real).catch(() => undefined);
    if (existing && !overwrite) {
      throw new ServiceError("FILE_EXISTS", `${destinationInput}: already exists (pass overwrite: true to replace it)`, {
        path: destinationInput,
      });
    }
    const parent = await stat(path.dirname(destination.real)).catch(() => undefined);
    if (!parent) throw new ServiceError("FILE_NOT_FOUND", `${destinationInput}: the parent directory does not exist`, { path: destinationInput });
    try {
      await rename(source.real, destination.real);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      // Another filesystem (e.g. a read-write path on its own mount): copy, then remove the original.
      await cp(source.real, destination.real, { recursive: true, force: overwrite, errorOnExist: !overwrite, preserveTimestamps: true, verbatimSymlinks: true });
      await rm(source.real, { recursive: true });
    }
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EINVAL") throw new ServiceError("INVALID_REQUEST", `${sourceInput}: cannot move a directory into itself`, { path: sourceInput });
    throw toFileError(error, code === "ENOENT" ? sourceInput : destinationInput);
  }
}

function refuseRoot(target: ResolvedPath, input: string, verb: string): void {
  if (target.isRoot) throw new ServiceError("PERMISSION_DENIED", `${input}: cannot ${verb} the workspace or a configured root`, { path: input });
}
