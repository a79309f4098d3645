/**
 * Helpers for the local runtime's tests: temporary data directories, and what /proc says about a
 * process (a zombie has exited, it only waits for its parent to collect it). HTTP calls and polling
 * come from the container tests' helpers.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface DataDir {
  path: string;
  remove(): void;
}

export function tempDataDir(): DataDir {
  const path = mkdtempSync(join(tmpdir(), "sandbox-runtime-test-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Whether `pid` is a process that has not exited (zombies have). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Running processes whose environment has `name=value`. */
export function processesWithEnv(name: string, value: string): number[] {
  const needle = `${name}=${value}\0`;
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1");
      if ((environ.startsWith(needle) || environ.includes(`\0${needle}`)) && isRunning(Number(entry))) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

export { call, eventually, type JsonReply } from "../container/helpers.ts";
