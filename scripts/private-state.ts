/**
 * The Worker's persisted state (wrangler's `.wrangler/state`, or WRANGLER_PERSIST_TO) readable by its
 * owner only. It holds the Durable Objects' SQLite files (each sandbox's config, egress secrets,
 * preview tokens) and the local R2 bucket (durable workspaces and snapshots), which wrangler writes
 * with the usual 0755 folders and 0644 files: any local user could read a secret out of a WAL or list
 * another sandbox's snapshot. So the folder is made 0700 when missing, and a folder found there is
 * tightened (folders 0700, files 0600, links left alone, since they are no content of their own).
 * The Worker's process then runs with umask 077 (worker-dev.ts), so what it writes later is private
 * too. Only the state itself is closed: the folders above it are left as they are, as sandboxes, which
 * run as other host users, may need to pass through them to their own.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

export const PRIVATE_FOLDER_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Makes `folder` (0700) when missing, else tightens it and everything below it. */
export function privateState(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  tighten(folder);
}

function tighten(path: string): void {
  const found = lstatSync(path, { throwIfNoEntry: false });
  if (!found || found.isSymbolicLink()) return;
  if (found.isDirectory()) {
    // Closed first, so nobody walks in while the rest is tightened.
    if ((found.mode & 0o777) !== PRIVATE_FOLDER_MODE) chmodSync(path, PRIVATE_FOLDER_MODE);
    for (const name of readdirSync(path)) tighten(join(path, name));
  } else if ((found.mode & 0o777 & ~PRIVATE_FILE_MODE) !== 0) {
    // Never adds a bit: an executable stays as it is but for what others had.
    chmodSync(path, found.mode & 0o700);
  }
}
