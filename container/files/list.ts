/**
 * Directory listings, read through directory handles (locate.ts). Recursion never follows a symlinked
 * directory (no loops, no way out), and stops at `maxEntries` with `truncated: true` so a huge tree
 * cannot exhaust memory.
 */
import { lstat, opendir, readlink } from "node:fs/promises";
import type { Stats } from "node:fs";
import path from "node:path";
import { FILE_LIMITS, type FileInfo, type FileType } from "../../protocol/files.ts";
import type { DirHandle } from "./dir-handle.ts";
import { toFileError } from "./errors.ts";
import { locate, openEntryDirectory } from "./locate.ts";
import type { PathPolicy } from "./paths.ts";

export interface ListOptions {
  recursive?: boolean;
  includeHidden?: boolean;
  maxEntries?: number;
}

export interface Listing {
  path: string;
  files: FileInfo[];
  truncated: boolean;
}

export function fileTypeOf(stats: Stats): FileType {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  if (stats.isSymbolicLink()) return "symlink";
  return "other";
}

export async function listDirectory(policy: PathPolicy, input: string, options: ListOptions = {}): Promise<Listing> {
  const entry = await locate(policy, input, "read");
  const top = await openEntryDirectory(entry).finally(() => entry.dir.close());
  const maxEntries = options.maxEntries ?? FILE_LIMITS.maxListEntries;
  const includeHidden = options.includeHidden ?? false;
  const files: FileInfo[] = [];
  // Depth first, names sorted: a directory's entries follow it directly, as `find` prints them.
  const stack: { dir: DirHandle; relativeDir: string; names: string[]; next: number }[] = [];
  try {
    stack.push({ dir: top, relativeDir: "", names: await readNames(top, includeHidden), next: 0 });
    while (stack.length > 0) {
      const frame = stack.at(-1)!;
      if (frame.next >= frame.names.length) {
        await frame.dir.close();
        stack.pop();
        continue;
      }
      const name = frame.names[frame.next++]!;
      if (files.length >= maxEntries) return { path: entry.display, files, truncated: true };
      const relativePath = frame.relativeDir === "" ? name : `${frame.relativeDir}/${name}`;
      const info = await describe(frame.dir, name, path.join(entry.display, relativePath), relativePath);
      if (!info) continue; // vanished while we listed
      files.push(info);
      if (options.recursive && info.type === "directory") {
        // Opened without following: a directory swapped for a symlink since is not descended into.
        const child = await frame.dir.openChild(name).catch(() => undefined);
        if (child) stack.push({ dir: child, relativeDir: relativePath, names: await readNames(child, includeHidden).catch(() => []), next: 0 });
      }
    }
    return { path: entry.display, files, truncated: false };
  } catch (error) {
    throw toFileError(error, input);
  } finally {
    for (const frame of stack) await frame.dir.close();
  }
}

async function readNames(directory: DirHandle, includeHidden: boolean): Promise<string[]> {
  const names: string[] = [];
  const dir = await opendir(directory.self);
  for await (const entry of dir) {
    if (includeHidden || !entry.name.startsWith(".")) names.push(entry.name);
  }
  return names.sort();
}

async function describe(dir: DirHandle, name: string, display: string, relativePath: string): Promise<FileInfo | undefined> {
  const stats = await lstat(dir.at(name)).catch(() => undefined);
  if (!stats) return undefined;
  const type = fileTypeOf(stats);
  const info: FileInfo = {
    name,
    relativePath,
    absolutePath: display,
    type,
    size: stats.size,
    mode: (stats.mode & 0o7777).toString(8).padStart(4, "0"),
    modifiedAt: stats.mtime.toISOString(),
  };
  if (type === "symlink") {
    const target = await readlink(dir.at(name)).catch(() => undefined);
    if (target !== undefined) info.target = target;
  }
  return info;
}
