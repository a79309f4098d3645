/**
 * Finds processes by an environment tag. The container server hands its run tag (protocol
 * RUN_TAG_VAR) to every command it starts, and their children inherit it, so the tag finds them even
 * after their parent died and they were re-parented — the local stand-in for "everything in this
 * container's namespace".
 */
import { readdirSync, readFileSync } from "node:fs";
import { RUN_TAG_VAR } from "../protocol/runtime.ts";

/** Pids whose environment has RUN_TAG_VAR=<tag>; empty where /proc is not available. */
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
