/**
 * Directory listings. Recursion never follows a symlinked directory (no loops, no way out), and stops
 * at `maxEntries` with `truncated: true` so a huge tree cannot exhaust memory.
 */
import { lstat, opendir, readlink } from "node:fs/promises";
import type { Stats } from "node:fs";
import path from "node:path";
import { FILE_LIMITS, type FileInfo, type FileType } from "../../protocol/files.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { toFileError } from "./errors.ts";
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
  const target = await policy.resolve(input, "read");
  const maxEntries = options.maxEntries ?? FILE_LIMITS.maxListEntries;
  const files: FileInfo[] = [];
  try {
    const top = await lstat(target.real);
    if (!top.isDirectory()) throw new ServiceError("NOT_A_DIRECTORY", `${input}: not a directory`, { path: input });
    // Depth first, names sorted: a directory's entries follow it directly, as `find` prints them.
    const stack: { relativeDir: string; names: string[]; next: number }[] = [
      { relativeDir: "", names: await readNames(target.real, options.includeHidden ?? false), next: 0 },
    ];
    while (stack.length > 0) {
      const frame = stack.at(-1)!;
      if (frame.next >= frame.names.length) {
        stack.pop();
        continue;
      }
      const name = frame.names[frame.next++]!;
      if (files.length >= maxEntries) return { path: target.display, files, truncated: true };
      const relativePath = frame.relativeDir === "" ? name : `${frame.relativeDir}/${name}`;
      const info = await describe(path.join(target.real, relativePath), path.join(target.display, relativePath), name, relativePath);
      if (!info) continue; // vanished while we listed
      files.push(info);
      if (options.recursive && info.type === "directory") {
        const names = await readNames(path.join(target.real, relativePath), options.includeHidden ?? false).catch(() => []);
        stack.push({ relativeDir: relativePath, names, next: 0 });
      }
    }
    return { path: target.display, files, truncated: false };
  } catch (error) {
    throw toFileError(error, input);
  }
}

async function readNames(directory: string, includeHidden: boolean): Promise<string[]> {
  const names: string[] = [];
  const dir = await opendir(directory);
  for await (const entry of dir) {
    if (includeHidden || !entry.name.startsWith(".")) names.push(entry.name);
  }
  return names.sort();
}

async function describe(real: string, display: string, name: string, relativePath: string): Promise<FileInfo | undefined> {
  const stats = await lstat(real).catch(() => undefined);
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
    const target = await readlink(real).catch(() => undefined);
    if (target !== undefined) info.target = target;
  }
  return info;
}
