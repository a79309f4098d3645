/**
 * Finds processes by their environment. A container server is started with its run's tag (protocol
 * RUN_TAG_VAR) and keeps it, so the tag finds the server of a run even when this runtime did not
 * start it (one a previous runtime left running). Commands build their own environment and do not
 * carry the tag: the server's process tree (process-tree.ts) is what finds them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { RUN_TAG_VAR } from "../protocol/runtime.ts";

/** Pids whose environment has RUN_TAG_VAR=<tag>; empty where /proc is not available. */
export function processesTagged(tag: string): number[] {
  return processesWithEnv(RUN_TAG_VAR, tag);
}

/** Pids (other than this process) whose environment has `name=value`; empty where /proc is not available. */
export function processesWithEnv(name: string, value: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const variable = `\0${name}=${value}\0`;
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      // NUL-separated entries; framed with NULs so only a whole entry matches.
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1");
      if (`\0${environ}${environ.endsWith("\0") ? "" : "\0"}`.includes(variable)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
