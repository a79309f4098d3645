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
 * fills only that; `npm start` says where it cannot (and so the above holds), and where the disks of
 * as many sandboxes as may run can together take more than is free under the Worker's state: a
 * disk's image is written by the kernel, which root's reserve does not hold back, and the runtime
 * promises a running sandbox only the first PROMISED_BYTES of its room (a start is refused while
 * those are not free), so disks larger than that can together fill the host.
 */
import { statSync, statfsSync } from "node:fs";
import { PROMISED_BYTES } from "../runtime/container/disk.ts";

/** Less kept for root than this is no reserve worth the name: a snapshot or two. */
const MIN_RESERVE_BYTES = 64 * 1024 * 1024;

/** The folder itself, or the nearest one above it that exists. */
function existing(path: string): string {
  let at = path;
  while (statSync(at, { throwIfNoEntry: false }) === undefined && at !== "/") at = at.replace(/\/[^/]*\/?$/, "") || "/";
  return at;
}

/** Free bytes of the file system under `path`, root's reserve included. */
function freeBytes(path: string): number {
  const found = statfsSync(existing(path));
  return Number(found.bfree) * Number(found.bsize);
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

/** Each sandbox's disk as the runtime has it: its size, and why sandboxes have none of their own, if they have not. */
export interface SandboxDiskState {
  bytes: number;
  unavailable: string | undefined;
  /** Sandboxes that may run at once (SANDBOX_MAX_SANDBOXES). */
  sandboxes: number;
}

/**
 * The start banner's word on the disk, or undefined when there is nothing to say: `disks` undefined
 * where sandboxes are no containers (SANDBOX_ISOLATION=none).
 */
export function diskLine(dataDir: string, stateDir: string, sandboxesRunAsOthers: boolean, disks: SandboxDiskState | undefined): string | undefined {
  if (disks && disks.unavailable === undefined) {
    const free = freeBytes(stateDir);
    const together = disks.bytes * disks.sandboxes;
    // A disk no larger than what a running sandbox is promised is promised whole: starts are refused before they could fill it.
    if (statSync(existing(dataDir)).dev !== statSync(existing(stateDir)).dev || together <= free || disks.bytes <= PROMISED_BYTES) return undefined;
    return `the disks of ${disks.sandboxes} sandboxes (${gib(disks.bytes)} each, SANDBOX_DISK_MAX) can take more than is free where the Worker's state is (${gib(free)}), root's reserve included: a sandbox starts only while each running one has ${PROMISED_BYTES / 1024 ** 2} MiB of room left beside the service's reserve, but beyond that together they can fill it (SANDBOX_DISK_MAX=${PROMISED_BYTES / 1024 ** 2}M or less bounds them, or put SANDBOX_DATA_DIR on a file system of its own)`;
  }
  const why = disks?.unavailable ?? "sandboxes are no containers";
  const shared = diskWarning(dataDir, stateDir, sandboxesRunAsOthers);
  return `sandboxes have no disk of their own (${why}): they write on the data folder's disk${shared ? `; ${shared}` : ""}`;
}

function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}
