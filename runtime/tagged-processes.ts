/**
 * Finds processes by an environment tag. Every process a container server starts inherits its
 * environment, so a per-run tag (SANDBOX_RUN_TAG) finds them even after their parent died and they
 * were re-parented — the local stand-in for "everything in this container's namespace".
 */
import { readdirSync, readFileSync } from "node:fs";

export const RUN_TAG_VAR = "SANDBOX_RUN_TAG";

/** Pids whose environment has SANDBOX_RUN_TAG=<tag>; empty where /proc is not available. */
export function processesTagged(tag: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const needle = `${RUN_TAG_VAR}=${tag}\0`;
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1");
      if (environ.includes(needle) || environ.endsWith(needle.slice(0, -1))) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
