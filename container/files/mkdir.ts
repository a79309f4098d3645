/**
 * mkdir: one directory whose parent exists, or (`recursive`) the whole chain, accepting a directory
 * that is already there. Every directory is made inside its parent held open (locate.ts).
 */
import { lstat, mkdir } from "node:fs/promises";
import type { MkdirResponse } from "../../protocol/files.ts";
import type { SuccessEnvelope } from "../../protocol/process.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { toFileError } from "./errors.ts";
import { locate } from "./locate.ts";
import type { PathPolicy } from "./paths.ts";

export async function makeDirectory(
  policy: PathPolicy,
  input: string,
  options: { recursive?: boolean; mode?: number } = {},
): Promise<Omit<MkdirResponse, keyof SuccessEnvelope>> {
  const recursive = options.recursive ?? false;
  const mode = options.mode === undefined ? {} : { mode: options.mode };
  const entry = await locate(policy, input, "write", { createParents: recursive, ...(options.mode === undefined ? {} : { parentMode: options.mode }) });
  try {
    try {
      await mkdir(entry.dir.at(entry.name), mode);
      return { path: entry.display, created: true };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || !recursive) throw error;
    }
    if (!(await lstat(entry.dir.at(entry.name))).isDirectory()) {
      throw new ServiceError("FILE_EXISTS", `${input}: exists and is not a directory`, { path: input });
    }
    return { path: entry.display, created: entry.createdParents };
  } catch (error) {
    throw toFileError(error, input);
  } finally {
    await entry.dir.close();
  }
}
