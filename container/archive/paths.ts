/**
 * Which workspace paths an archive covers, checked before anything is read or removed: each lies
 * inside the workspace lexically and by its real parent folder (so a symbolic link higher up cannot
 * lead the archive or a clear out of the workspace). The last component may itself be a link: it is
 * archived or removed as a link, never followed.
 */
import { lstat, realpath } from "node:fs/promises";
import path from "node:path";
import { ServiceError } from "../../server-kit/service-error.ts";
import { isInside } from "../files/paths.ts";

/** Names of a restore's staging folders inside the workspace (left out of archives, removed when found stale). */
export const STAGING_PREFIX = ".sandbox-restore-";

/** The paths relative to the workspace, normalised ("." for the whole workspace). */
export async function archivePaths(workspace: string, paths: readonly string[] | undefined): Promise<string[]> {
  if (paths === undefined) return ["."];
  const realWorkspace = await realpath(workspace);
  const checked = new Set<string>();
  for (const input of paths) {
    const relative = path.posix.normalize(input).replace(/\/+$/, "") || ".";
    const absolute = path.resolve(workspace, relative);
    if (!isInside(absolute, workspace) || relative.split("/").includes("..")) {
      throw new ServiceError("PATH_OUTSIDE_WORKSPACE", `${input}: archive paths stay inside the workspace`, { path: input });
    }
    if (relative !== ".") {
      const parent = await realpath(path.dirname(absolute)).catch(() => undefined);
      if (parent === undefined) throw new ServiceError("FILE_NOT_FOUND", `${input}: no such file or directory`, { path: input });
      if (!isInside(parent, realWorkspace)) {
        throw new ServiceError("PATH_OUTSIDE_WORKSPACE", `${input}: it resolves (through a symbolic link) to a place outside the workspace`, { path: input });
      }
    }
    checked.add(relative);
  }
  return [...checked];
}

/** The paths that exist (lstat: a dangling link exists), FILE_NOT_FOUND for the first that does not. */
export async function existingPaths(workspace: string, relatives: readonly string[]): Promise<string[]> {
  for (const relative of relatives) {
    const found = await lstat(path.resolve(workspace, relative)).catch(() => undefined);
    if (!found) throw new ServiceError("FILE_NOT_FOUND", `${relative}: no such file or directory`, { path: relative });
  }
  return [...relatives];
}
