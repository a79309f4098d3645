/**
 * Restoring an archive into the workspace, all or nothing: it is extracted into a staging folder
 * beside its target (inside the workspace, so on the same filesystem), and only once the whole
 * archive is in is its content swapped into place by renames. A refused, cut or oversized archive,
 * or a full disk, leaves the workspace exactly as it was; a crash midway leaves no file half
 * written (every file is whole, the old one or the new one) and at worst a staging folder, which
 * the next restore removes. The extraction itself runs off the server's event loop, within
 * deadlines (extract-off-loop.ts).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rm } from "node:fs/promises";
import { ARCHIVE_LIMITS, maxDecompressedBytes } from "../../protocol/archive.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { DirHandle } from "../files/dir-handle.ts";
import { toFileError } from "../files/errors.ts";
import { extractOffLoop, type Deadlines } from "./extract-off-loop.ts";
import type { ExtractLimits, UnpackResult } from "./extract-tree.ts";
import { STAGING_PREFIX } from "./paths.ts";
import { swapIn } from "./swap-in.ts";

export type { UnpackResult } from "./extract-tree.ts";

export interface UnpackOptions {
  /** These paths (relative, checked by archivePaths) end up holding exactly the archive's: what was there and is not in it goes. */
  clear?: readonly string[];
  limits?: Partial<Pick<ExtractLimits, "maxBytes" | "maxEntries">>;
  /** Default: ARCHIVE_LIMITS' extraction deadlines. */
  deadlines?: Deadlines;
}

export async function unpackArchive(workspace: string, body: AsyncIterable<Buffer>, options: UnpackOptions = {}): Promise<UnpackResult> {
  const maxBytes = options.limits?.maxBytes ?? ARCHIVE_LIMITS.maxExtractedBytes;
  const maxEntries = options.limits?.maxEntries ?? ARCHIVE_LIMITS.maxExtractedEntries;
  const limits: ExtractLimits = {
    maxBytes,
    maxEntries,
    maxDecompressedBytes: maxDecompressedBytes({ maxExtractedBytes: maxBytes, maxExtractedEntries: maxEntries }),
    maxTrailingBytes: ARCHIVE_LIMITS.maxTrailingBytes,
  };
  const root = await DirHandle.openRoot(workspace);
  const stagingName = `${STAGING_PREFIX}${randomBytes(8).toString("hex")}`;
  active.add(stagingName);
  const opened: DirHandle[] = [];
  try {
    await removeLeftovers(root);
    await mkdir(root.at(stagingName), { mode: 0o700 }).catch((error: unknown) => {
      throw toFileError(error, stagingName);
    });
    const staging = await root.openChild(stagingName);
    opened.push(staging);
    await Promise.all([mkdir(staging.at("tree")), mkdir(staging.at("old"))]).catch((error: unknown) => {
      throw toFileError(error, stagingName);
    });
    const [tree, old] = [await staging.openChild("tree"), await staging.openChild("old")];
    opened.push(tree, old);
    // By descriptor: a command that swaps the staging folder for a link cannot send the extraction elsewhere.
    const result = await extractOffLoop(tree.self, body, limits, options.deadlines).catch((error: unknown) => {
      throw error instanceof ServiceError ? error : toFileError(error, "archive");
    });
    await swapIn(root, tree, old, options.clear ?? []);
    return result;
  } finally {
    await Promise.all(opened.map((dir) => dir.close()));
    await rm(root.at(stagingName), { recursive: true, force: true }).catch(() => undefined);
    active.delete(stagingName);
    await root.close();
  }
}

/** Staging folders of restores under way in this server (never taken for leftovers). */
const active = new Set<string>();

/** Staging folders an interrupted restore left behind. */
async function removeLeftovers(root: DirHandle): Promise<void> {
  for (const name of await readdir(root.self).catch(() => [] as string[])) {
    if (name.startsWith(STAGING_PREFIX) && !active.has(name)) await rm(root.at(name), { recursive: true, force: true }).catch(() => undefined);
  }
}
