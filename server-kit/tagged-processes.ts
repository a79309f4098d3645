/**
 * Finds processes by their run's tag (protocol RUN_TAG_VAR) in their environment. A container server
 * is started with its run's tag; every command it starts gets `<tag>/<n>`, and whatever a command
 * starts inherits it, wherever it moves (a new session, a double fork, reparented to init). So the
 * tag finds all a run started: the runtime ends a container's run with it (also one a previous
 * runtime left running), the server ends what one command left behind.
 *
 * It is not a wall: a command that clears its environment and leaves its session is lost to it. That
 * takes intent; isolation `none` holds off no one with intent, bwrap's pid namespace does.
 */
import { readdirSync, readFileSync } from "node:fs";
import { RUN_TAG_VAR } from "../protocol/runtime.ts";

/** Pids tagged `tag` or below it (`tag/…`): a run's server and its commands. Empty where /proc is not available. */
export function processesTagged(tag: string): number[] {
  const exact = `\0${RUN_TAG_VAR}=${tag}\0`;
  const below = `\0${RUN_TAG_VAR}=${tag}/`;
  return scanEnvironments((environ) => environ.includes(exact) || environ.includes(below));
}

/** Pids tagged below `tag` only: the commands of a run, not its server. */
export function processesTaggedBelow(tag: string): number[] {
  const below = `\0${RUN_TAG_VAR}=${tag}/`;
  return scanEnvironments((environ) => environ.includes(below));
}

/** Pids tagged exactly `tag`: one command and all it started. */
export function processesTaggedExactly(tag: string): number[] {
  return processesWithEnv(RUN_TAG_VAR, tag);
}

/** Pids (other than this process) whose environment has `name=value`; empty where /proc is not available. */
export function processesWithEnv(name: string, value: string): number[] {
  const variable = `\0${name}=${value}\0`;
  return scanEnvironments((environ) => environ.includes(variable));
}

/** Pids other than this process whose environment (framed by NULs, so only whole entries match) passes `test`. */
function scanEnvironments(test: (environ: string) => boolean): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, "latin1");
      if (test(`\0${environ}${environ.endsWith("\0") ? "" : "\0"}`)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
