/**
 * rename (to exactly the new path) and move (`mv`: into an existing directory, else to the path).
 * Both act on the entry itself, not on what a symlink in its last component points to, and both
 * rename between directories held open (locate.ts). Across filesystems the entry is copied to a
 * temporary name beside the destination, renamed into place, and only then removed at the source.
 */
import { randomBytes } from "node:crypto";
import { lstat, rename } from "node:fs/promises";
import path from "node:path";
import type { MoveFileResponse, RenameFileResponse } from "../../protocol/files.ts";
import type { SuccessEnvelope } from "../../protocol/process.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { toFileError } from "./errors.ts";
import { locate, openEntryDirectory, refuseRoot, type Entry } from "./locate.ts";
import type { PathPolicy } from "./paths.ts";
import { copyTree, removeTree } from "./tree.ts";

interface RelocateOptions {
  overwrite?: boolean;
}

export async function renameEntry(
  policy: PathPolicy,
  oldPath: string,
  newPath: string,
  options: RelocateOptions = {},
): Promise<Omit<RenameFileResponse, keyof SuccessEnvelope>> {
  return withSource(policy, oldPath, async (source) => {
    const destination = await locate(policy, newPath, "write", { followFinal: false });
    try {
      await relocate(source, destination, options.overwrite ?? false);
      return { oldPath: source.display, newPath: destination.display };
    } finally {
      await destination.dir.close();
    }
  });
}

export async function moveEntry(
  policy: PathPolicy,
  sourcePath: string,
  destinationPath: string,
  options: RelocateOptions = {},
): Promise<Omit<MoveFileResponse, keyof SuccessEnvelope>> {
  return withSource(policy, sourcePath, async (source) => {
    const destination = await moveDestination(policy, source, destinationPath);
    try {
      await relocate(source, destination, options.overwrite ?? false);
      return { sourcePath: source.display, destinationPath: destination.display };
    } finally {
      await destination.dir.close();
    }
  });
}

/** The source entry (which must exist) for the duration of `work`. */
async function withSource<T>(policy: PathPolicy, input: string, work: (source: Entry) => Promise<T>): Promise<T> {
  const source = await locate(policy, input, "write", { followFinal: false });
  try {
    refuseRoot(source, "move");
    await lstat(source.dir.at(source.name)).catch((error: unknown) => {
      throw toFileError(error, input);
    });
    return await work(source);
  } finally {
    await source.dir.close();
  }
}

/** `mv` semantics: inside `input` when it names a directory (through symlinks that stay inside), else `input` itself. */
async function moveDestination(policy: PathPolicy, source: Entry, input: string): Promise<Entry> {
  const named = await locate(policy, input, "write");
  let into;
  try {
    const stats = await lstat(named.dir.at(named.name)).catch(() => undefined);
    if (stats?.isDirectory()) into = await openEntryDirectory(named);
  } finally {
    await named.dir.close();
  }
  if (!into) return locate(policy, input, "write", { followFinal: false });
  const real = path.join(into.real, source.name);
  return {
    dir: into,
    name: source.name,
    input,
    display: path.join(named.display, path.basename(source.display)),
    real,
    isRoot: policy.isRoot(real),
    createdParents: false,
  };
}

async function relocate(source: Entry, destination: Entry, overwrite: boolean): Promise<void> {
  refuseRoot(destination, "replace");
  if (source.real === destination.real) return;
  const to = destination.dir.at(destination.name);
  try {
    const existing = await lstat(to).catch(() => undefined);
    if (existing && !overwrite) {
      throw new ServiceError("FILE_EXISTS", `${destination.input}: already exists (pass overwrite: true to replace it)`, {
        path: destination.input,
      });
    }
    try {
      await rename(source.dir.at(source.name), to);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      await moveAcross(source, destination);
    }
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EINVAL") throw new ServiceError("INVALID_REQUEST", `${source.input}: cannot move a directory into itself`, { path: source.input });
    throw toFileError(error, code === "ENOENT" ? source.input : destination.input);
  }
}

/** Another filesystem (e.g. a read-write path on its own mount): copy beside the destination, rename, then remove the source. */
async function moveAcross(source: Entry, destination: Entry): Promise<void> {
  const staging = `.${destination.name}.move-${randomBytes(6).toString("hex")}`;
  try {
    await copyTree(source.dir, source.name, destination.dir, staging);
    await rename(destination.dir.at(staging), destination.dir.at(destination.name));
  } catch (error) {
    await removeTree(destination.dir, staging).catch(() => undefined);
    throw error;
  }
  await removeTree(source.dir, source.name);
}
