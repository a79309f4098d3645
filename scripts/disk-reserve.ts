/**
 * Whether a sandbox can fill the disk the Worker's state is on. Sandboxes' files (their workspaces
 * and writable layers) are written by their own unprivileged host users; the Worker's state (its
 * Durable Objects' SQLite files, the local R2 bucket) and the runtime's own files by the user
 * running `npm start`. On a file system that keeps blocks for root (ext4 keeps 5% by default), a
 * root service therefore goes on writing its state after the sandboxes have filled the disk: the
 * filler's writes fail (507 INSUFFICIENT_STORAGE), the service and the other sandboxes answer. Where
 * the two share a file system with no such reserve, or the sandboxes write as the service's own user,
 * one sandbox can fill the disk under the service: `npm start` says so, with what to do about it.
 *
 * Where a root runtime gives each sandbox a disk of its own (runtime/container/disk.ts), a sandbox
 * fills only that, and the disks together never take the room the runtime keeps for the service
 * (each is held to what the host can give it); `npm start` says where sandboxes have no such disk
 * (and so the above holds).
 */
import { statSync, statfsSync } from "node:fs";

/** Less kept for root than this is no reserve worth the name: a snapshot or two. */
const MIN_RESERVE_BYTES = 64 * 1024 * 1024;

/** The folder itself, or the nearest one above it that exists. */
function existing(path: string): string {
  let at = path;
  while (statSync(at, { throwIfNoEntry: false }) === undefined && at !== "/") at = at.replace(/\/[^/]*\/?$/, "") || "/";
  return at;
}

/** Bytes of the file system under `path` that only root may write. */
export function rootReserveBytes(path: string): number {
  const found = statfsSync(existing(path));
  return Number(found.bfree - found.bavail) * Number(found.bsize);
}

/**
 * A warning for the start banner, or undefined: when the sandboxes' data and the Worker's state share
 * a file system, and either the sandboxes write as the service's user or it keeps no reserve for root.
 */
export function diskWarning(dataDir: string, stateDir: string, sandboxesRunAsOthers: boolean): string | undefined {
  if (statSync(existing(dataDir)).dev !== statSync(existing(stateDir)).dev) return undefined;
  const why = !sandboxesRunAsOthers
    ? "sandboxes write as the service's own user"
    : rootReserveBytes(stateDir) < MIN_RESERVE_BYTES
      ? "their file system keeps nothing for root"
      : undefined;
  if (why === undefined) return undefined;
  return `sandboxes and the Worker's state share a disk and ${why}: one sandbox can fill it under the service (put SANDBOX_DATA_DIR on a file system of its own)`;
}

/** Each sandbox's disk as the runtime has it: why sandboxes have none of their own, if they have not. */
export interface SandboxDiskState {
  unavailable: string | undefined;
}

/**
 * The start banner's word on the disk, or undefined when there is nothing to say: `disks` undefined
 * where sandboxes are no containers (SANDBOX_ISOLATION=none).
 */
export function diskLine(dataDir: string, stateDir: string, sandboxesRunAsOthers: boolean, disks: SandboxDiskState | undefined): string | undefined {
  // Each sandbox's own disk, held under what the host can give: nothing to say.
  if (disks && disks.unavailable === undefined) return undefined;
  const why = disks?.unavailable ?? "sandboxes are no containers";
  const shared = diskWarning(dataDir, stateDir, sandboxesRunAsOthers);
  return `sandboxes have no disk of their own (${why}): they write on the data folder's disk${shared ? `; ${shared}` : ""}`;
}
