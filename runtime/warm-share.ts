/**
 * A warm server outside any container (a runtime without isolation) has no control group to weigh.
 * It runs in a session of its own, though, and the kernel's autogroup gives each session its own
 * share of contended CPU, set by the group's nice value. So such a server boots and waits with the
 * least share (as a warm container does at cpu.weight 1), and gets an ordinary one when taken:
 * a refill booting beside a new sandbox's first command then takes only what that sandbox leaves.
 * Only where the runtime may give the share back (raising it takes root): a server left at the least
 * share would serve its sandbox slowly.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";

/** The least share (the highest nice value). */
const LEAST = 19;
const ORDINARY = 0;

/** Whether warm servers can wait with the least share and be given an ordinary one back. */
export function warmShareAdjustable(): boolean {
  return process.getuid?.() === 0 && existsSync("/proc/self/autogroup");
}

/** Gives the session (autogroup) of `pid` the least share of contended CPU; false where it could not. */
export function leastShare(pid: number | undefined): boolean {
  return setAutogroupNice(pid, LEAST);
}

/** Gives the session (autogroup) of `pid` an ordinary share of contended CPU again. */
export function ordinaryShare(pid: number | undefined): boolean {
  return setAutogroupNice(pid, ORDINARY);
}

/** The nice value of the autogroup `pid` runs in, as the kernel reports it. */
export function autogroupNice(pid: number): number | undefined {
  const match = /nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, "utf8"));
  return match ? Number(match[1]) : undefined;
}

function setAutogroupNice(pid: number | undefined, nice: number): boolean {
  if (pid === undefined) return false;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
    return true;
  } catch {
    return false; // gone meanwhile, or not ours to change
  }
}
