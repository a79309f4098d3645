/**
 * Helpers for the local runtime's tests: temporary data directories, and what /proc says about a
 * process (a zombie has exited, it only waits for its parent to collect it). HTTP calls, polling and
 * the process list come from the container tests' helpers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processesWithEnv } from "../../runtime/tagged-processes.ts";
import { processes } from "../container/helpers.ts";

export interface DataDir {
  path: string;
  remove(): void;
}

export function tempDataDir(): DataDir {
  const path = mkdtempSync(join(tmpdir(), "sandbox-runtime-test-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Pids of processes that have not exited (zombies have). */
export function runningPids(): Set<number> {
  return new Set(processes().filter((p) => p.state !== "Z").map((p) => p.pid));
}

export function isRunning(pid: number): boolean {
  return runningPids().has(pid);
}

/** Running processes whose environment has `name=value`. */
export function runningWithEnv(name: string, value: string): number[] {
  const running = runningPids();
  return processesWithEnv(name, value).filter((pid) => running.has(pid));
}

export { call, eventually, type JsonReply } from "../container/helpers.ts";
