/**
 * A gzip-compressed tar of workspace paths, produced as it is read (node-tar's Pack: files are read
 * in chunks as the reader pulls, so an archive of any size passes through in bounded memory).
 * Symbolic links are archived as links, never followed; files, folders (empty ones too) and links
 * are all an archive holds: sockets, FIFOs and devices are left out. Paths are relative to the
 * workspace, with no owner names or ids (`portable`), so an archive restores into any workspace.
 *
 * A command may delete what is being packed (a build cleaning up, or on purpose). node-tar then
 * fails the pack, and keeps emitting an error for each entry still in flight, with nobody listening
 * once the reader is gone: unhandled, those would take the server down. So every error of the pack
 * is caught here, and the first ends the archive with ARCHIVE_SOURCE_CHANGED (a reader sees a failed
 * or cut archive, never a whole-looking one lacking entries).
 */
import type { Stats } from "node:fs";
import { Readable } from "node:stream";
import type { ReadEntry } from "tar";
import { ServiceError } from "../../server-kit/service-error.ts";
import { STAGING_PREFIX } from "./paths.ts";
import { loadTar } from "./tar-library.ts";

export interface PackOptions {
  /** Default true. */
  gzip?: boolean;
  /** Workspace-relative paths left out with everything below them (normalised, no `..`). */
  exclude?: readonly string[];
  /** Entries also left out (with everything below them) when this says so of their workspace-relative path. */
  leaveOut?: (relative: string) => boolean;
}

/** True when the entry (as node-tar names it: "./a/b" or "a/b") is one of `exclude` or lies below one. */
function excluded(entryPath: string, exclude: readonly string[], leaveOut: PackOptions["leaveOut"]): boolean {
  const relative = entryPath.replace(/^\.\/?/, "").replace(/\/+$/, "");
  if (relative !== "" && leaveOut?.(relative)) return true;
  // A restore under way: its half-extracted tree is not workspace content.
  if (relative.startsWith(STAGING_PREFIX)) return true;
  return exclude.some((path) => relative === path || relative.startsWith(`${path}/`));
}

export function packArchive(workspace: string, relatives: readonly string[], options: PackOptions = {}): Readable {
  // Read through the pack's async iterator, so the HTTP response's backpressure reaches the files.
  return Readable.from(packed(workspace, relatives, options), { objectMode: false });
}

async function* packed(workspace: string, relatives: readonly string[], options: PackOptions): AsyncGenerator<Buffer> {
  const exclude = (options.exclude ?? []).map((path) => path.replace(/^\.\/?/, "").replace(/\/+$/, ""));
  const { create } = await loadTar();
  const pack = create(
    {
      cwd: workspace,
      gzip: options.gzip ?? true,
      portable: true,
      // node-tar reads a file in slices of up to 16 MiB by default; 1 MiB keeps the server's memory low.
      maxReadSize: 1024 * 1024,
      follow: false,
      filter: (path: string, entry: Stats | ReadEntry) =>
        !excluded(path, exclude, options.leaveOut) && (!("isFile" in entry) || entry.isFile() || entry.isDirectory() || entry.isSymbolicLink()),
    },
    [...relatives],
  );
  let failure: ServiceError | undefined;
  // Stays attached after the reader stops: errors of entries still in flight land here, not on the process.
  pack.on("error", (error: unknown) => {
    failure ??= sourceChanged(error as NodeJS.ErrnoException);
  });
  try {
    for await (const chunk of pack as AsyncIterable<Buffer>) {
      if (failure) break;
      yield chunk;
    }
  } catch (error) {
    throw failure ?? sourceChanged(error as NodeJS.ErrnoException);
  }
  if (failure) throw failure;
}

/** The pack's failure in our words (no host path: the reason only). */
function sourceChanged(error: NodeJS.ErrnoException): ServiceError {
  const what = error.code === "ENOENT" ? "vanished" : `could not be read (${error.code ?? error.message})`;
  return new ServiceError("ARCHIVE_SOURCE_CHANGED", `an entry ${what} while the archive was made; nothing was kept, try again`, {
    ...(error.code === undefined ? {} : { reason: error.code }),
  });
}
