/**
 * Extracting a tar (gzip-compressed or not) into a folder as it streams in: decompressed and its
 * framing checked first (decompress.ts, tar-framing.ts), then node-tar's UnpackSync, fed one chunk at
 * a time, so an archive of any size passes through in bounded memory. The folder is a fresh staging
 * folder (unpack.ts swaps its content into place). This runs off the server's event loop, in a
 * worker of its own (extract-worker.ts): synchronous on purpose there, since the asynchronous Unpack
 * makes five or six thread-pool round trips per file (lstat, open, write, utimes, close) and one per
 * written slice, which made extraction more than twice as slow as the same work done in line.
 *
 * Everything lands inside the folder, within the extraction limits (total size and entries declared
 * by the archive: a small gzip'd archive may unfold to terabytes). node-tar refuses absolute paths, `..` and any entry whose
 * way passes through a symbolic link (one in the archive or one already on disk), hard links
 * included; each such refusal stops the extraction with INVALID_ARCHIVE. Symbolic links are the one
 * kind made here rather than by node-tar: node-tar would rewrite a link to an absolute or outside
 * target, which a workspace may rightly hold (`ln -s /usr/bin/python3 py`). They are made last,
 * after every other entry, so no entry of the archive can be written through one, and each is made
 * at a place whose folders are checked one by one to be real folders inside the workspace.
 * Modes keep their permission bits (the executable bit) and lose setuid, setgid and sticky.
 */
import { lstat, mkdir, rm, symlink } from "node:fs/promises";
import path from "node:path";
import type { ReadEntry } from "tar";
import { ServiceError } from "../../server-kit/service-error.ts";
import { decompressed } from "./decompress.ts";
import { loadTar } from "./tar-library.ts";
import { TarFraming } from "./tar-framing.ts";

/** Links an archive may make; more is not a workspace but an attempt to exhaust memory. */
const MAX_LINKS = 100_000;

export interface ExtractLimits {
  /** Total size of the files the archive holds (as its headers declare them). */
  maxBytes: number;
  /** Entries (files, folders, links) at most. */
  maxEntries: number;
  /** The decompressed stream at most, and what may follow the archive's end (tar-framing.ts). */
  maxDecompressedBytes: number;
  maxTrailingBytes: number;
}

export interface UnpackResult {
  entries: number;
  /** Compressed bytes read. */
  bytes: number;
}

interface PendingLink {
  path: string;
  target: string;
}

function invalid(message: string, context?: Record<string, unknown>): ServiceError {
  return new ServiceError("INVALID_ARCHIVE", message, context);
}

/** Out of space while writing: its own code, not a bad archive. */
function storageError(errno: unknown): ServiceError | undefined {
  if (errno !== "ENOSPC" && errno !== "EDQUOT") return undefined;
  return new ServiceError("INSUFFICIENT_STORAGE", `the archive does not fit: ${errno === "ENOSPC" ? "no space left on device" : "disk quota exceeded"}`, { errno });
}

export async function extractTree(workspace: string, body: AsyncIterable<Buffer>, limits: ExtractLimits): Promise<UnpackResult> {
  const links: PendingLink[] = [];
  let entries = 0;
  let declaredBytes = 0;
  let refusal: ServiceError | undefined;
  const { UnpackSync } = await loadTar();
  const unpack = new UnpackSync({
    cwd: workspace,
    preserveOwner: false,
    // What it is given is tar already (decompress.ts): it must not decompress anything itself.
    zstd: false,
    filter: (entryPath: string, entry: unknown) => {
      const read = entry as ReadEntry;
      declaredBytes += read.size ?? 0;
      if (declaredBytes > limits.maxBytes || entries + links.length >= limits.maxEntries) {
        refusal ??= new ServiceError("PAYLOAD_TOO_LARGE", `the archive unpacks to more than ${limits.maxBytes} bytes or ${limits.maxEntries} entries`, {
          maxBytes: limits.maxBytes,
          maxEntries: limits.maxEntries,
        });
        return false;
      }
      if (read.type === "SymbolicLink") {
        if (links.length >= MAX_LINKS) refusal ??= invalid(`the archive has more than ${MAX_LINKS} symbolic links`);
        else links.push({ path: entryPath, target: String(read.linkpath ?? "") });
        return false;
      }
      if (read.mode !== undefined) read.mode &= 0o777;
      entries++;
      return true;
    },
    onwarn: (code: string, message: string | Error, data: Record<string, unknown>) => {
      const entry = data.entry as ReadEntry | undefined;
      const text = message instanceof Error ? message.message : message;
      refusal ??= storageError((data as { code?: unknown }).code ?? (message as { code?: unknown }).code);
      refusal ??= invalid(`the archive was refused: ${text}`, { tarCode: code, ...(entry ? { entry: entry.path } : {}) });
    },
  });
  // Synchronous: every event below has happened by the time write() or end() returns.
  let failure: ServiceError | undefined;
  let finished = false;
  unpack.on("finish", () => (finished = true));
  unpack.on("error", (error: Error) => {
    failure ??= storageError((error as NodeJS.ErrnoException).code) ?? invalid(`not a tar or gzip-compressed tar archive: ${error.message}`);
  });

  const framing = new TarFraming({ maxBytes: limits.maxDecompressedBytes, maxTrailingBytes: limits.maxTrailingBytes });
  const input = decompressed(body);
  for await (const chunk of input.chunks) {
    // After the end marker the parser gets nothing more; the framing still counts what follows.
    for (const part of framing.take(chunk)) {
      unpack.write(part);
      if (refusal || failure) break;
    }
    if (refusal || failure) break;
  }
  const bytes = input.bytesRead;
  if (!refusal && !failure) unpack.end();
  // A refusal stops the reading midway: the cut tar that follows is not the reason to report.
  if (refusal ?? failure) throw refusal ?? failure;
  // node-tar's synchronous unpacker does not finish after some refused entries; one that did not
  // finish without saying why is refused too rather than taken for whole.
  if (!finished) throw invalid("the archive was refused: its extraction did not finish");

  for (const link of links) await makeLink(workspace, link);
  return { entries: entries + links.length, bytes };
}

/** Makes one link at its place in the workspace, after checking every folder on the way is a real one. */
async function makeLink(workspace: string, link: PendingLink): Promise<void> {
  const relative = path.posix.normalize(link.path).replace(/\/+$/, "");
  const parts = relative.split("/").filter((part) => part !== "" && part !== ".");
  if (path.posix.isAbsolute(link.path) || parts.includes("..") || parts.length === 0) {
    throw invalid(`the archive was refused: the link ${link.path} does not name a place inside the workspace`, { entry: link.path });
  }
  let folder = workspace;
  for (const part of parts.slice(0, -1)) {
    folder = path.join(folder, part);
    const found = await lstat(folder).catch(() => undefined);
    if (!found) await mkdir(folder);
    else if (!found.isDirectory()) {
      throw invalid(`the archive was refused: the link ${link.path} would be made through ${path.relative(workspace, folder)}, which is not a folder`, {
        entry: link.path,
      });
    }
  }
  const place = path.join(folder, parts.at(-1)!);
  await rm(place, { recursive: true, force: true });
  await symlink(link.target, place);
}
