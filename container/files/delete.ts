/**
 * delete: a file, a symlink (the link itself, wherever it points) or, with `recursive`, a directory
 * and everything in it — removed inside directories held open, never through a symlink.
 */
import { lstat, unlink } from "node:fs/promises";
import type { DeleteFileResponse } from "../../protocol/files.ts";
import type { SuccessEnvelope } from "../../protocol/process.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { toFileError } from "./errors.ts";
import { locate, refuseRoot } from "./locate.ts";
import type { PathPolicy } from "./paths.ts";
import { removeTree } from "./tree.ts";

export async function deleteEntry(
  policy: PathPolicy,
  input: string,
  options: { recursive?: boolean } = {},
): Promise<Omit<DeleteFileResponse, keyof SuccessEnvelope>> {
  const entry = await locate(policy, input, "write", { followFinal: false });
  try {
    refuseRoot(entry, "delete");
    const stats = await lstat(entry.dir.at(entry.name));
    if (!stats.isDirectory()) await unlink(entry.dir.at(entry.name));
    else if (options.recursive) await removeTree(entry.dir, entry.name);
    else throw new ServiceError("IS_A_DIRECTORY", `${input}: is a directory (pass recursive: true to delete it)`, { path: input });
    return { path: entry.display };
  } catch (error) {
    throw toFileError(error, input);
  } finally {
    await entry.dir.close();
  }
}
