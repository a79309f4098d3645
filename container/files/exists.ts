/**
 * exists: whether a path names something, and what (a symlink inside the roots is followed to what
 * it names). A path through a file or something missing is simply not there.
 */
import { lstat } from "node:fs/promises";
import type { ExistsResponse } from "../../protocol/files.ts";
import type { SuccessEnvelope } from "../../protocol/process.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { toFileError } from "./errors.ts";
import { fileTypeOf } from "./list.ts";
import { locate, type Entry } from "./locate.ts";
import type { PathPolicy } from "./paths.ts";

const ABSENT = new Set(["FILE_NOT_FOUND", "NOT_A_DIRECTORY"]);

export async function entryExists(policy: PathPolicy, input: string): Promise<Omit<ExistsResponse, keyof SuccessEnvelope>> {
  let entry: Entry;
  try {
    entry = await locate(policy, input, "read");
  } catch (error) {
    if (error instanceof ServiceError && ABSENT.has(error.code)) return { path: policy.display(input), exists: false };
    throw error;
  }
  try {
    return { path: entry.display, exists: true, type: fileTypeOf(await lstat(entry.dir.at(entry.name))) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { path: entry.display, exists: false };
    throw toFileError(error, input);
  } finally {
    await entry.dir.close();
  }
}
