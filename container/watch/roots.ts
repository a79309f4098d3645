/**
 * What a watch or a change digest starts from: the caller's path found with the file routes' walk
 * (container/files/locate.ts: anywhere in the sandbox but its server, symlinks checked step by step), and the options
 * read once into what the watcher and the digest take.
 */
import { lstat } from "node:fs/promises";
import { WATCH_LIMITS, type ChangesRequest, type WatchRequest } from "../../protocol/watch.ts";
import type { DirHandle } from "../files/dir-handle.ts";
import { toFileError } from "../files/errors.ts";
import { locate, openEntryDirectory } from "../files/locate.ts";
import type { PathPolicy } from "../files/paths.ts";
import { digestDirectory, digestEntry, type TreeDigest } from "./digest.ts";
import { pathFilter, type PathFilter } from "./globs.ts";

export interface WatchScope {
  recursive: boolean;
  filter: PathFilter;
}

export function watchScope(request: WatchRequest): WatchScope {
  return { recursive: request.recursive ?? true, filter: pathFilter(request) };
}

/** The directory to watch, held open, and its path as answers report it. NOT_A_DIRECTORY for anything else. */
export async function openWatchRoot(paths: PathPolicy, input: string): Promise<{ handle: DirHandle; display: string }> {
  const entry = await locate(paths, input, "read");
  try {
    return { handle: await openEntryDirectory(entry), display: entry.display };
  } finally {
    await entry.dir.close();
  }
}

/** The current version of a directory tree or of a single entry. */
export async function currentVersion(paths: PathPolicy, request: ChangesRequest): Promise<TreeDigest & { path: string }> {
  const scope = watchScope(request);
  const options = { ...scope, maxEntries: WATCH_LIMITS.maxDigestEntries };
  const entry = await locate(paths, request.path, "read");
  try {
    const isDirectory = (await lstat(entry.dir.at(entry.name)).catch((error: unknown) => {
      throw toFileError(error, request.path);
    })).isDirectory();
    if (!isDirectory) return { path: entry.display, ...(await digestEntry(entry.dir.at(entry.name), options)) };
    const dir = await openEntryDirectory(entry);
    try {
      return { path: entry.display, ...(await digestDirectory(dir, options)) };
    } finally {
      await dir.close();
    }
  } finally {
    await entry.dir.close();
  }
}
