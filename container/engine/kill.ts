/**
 * Signals for whole process groups. Each process leads its own group (spawned detached), so
 * `kill(-pgid)` reaches grandchildren too. A kill is the asked-for signal, then SIGKILL to whatever
 * of the group is still alive after the grace period — even if the leader already exited.
 */

/** Signals sent to end a process: these escalate to SIGKILL and mark the process as killed. */
const TERMINATING = new Set(["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGABRT", "SIGKILL"]);

export function isTerminatingSignal(signal: string): boolean {
  return TERMINATING.has(signal);
}

/** Sends `signal` to every process in the group led by `pgid`. False when no such group is left. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw error;
  }
}

export function groupAlive(pgid: number): boolean {
  return signalGroup(pgid, 0);
}

/** Signal now, SIGKILL after `graceMs` if any member of the group survives. Returns a cancel function. */
export function terminateGroup(pgid: number, signal: NodeJS.Signals, graceMs: number): () => void {
  const delivered = signalGroup(pgid, signal);
  if (!delivered || signal === "SIGKILL") return () => {};
  const timer = setTimeout(() => {
    if (groupAlive(pgid)) signalGroup(pgid, "SIGKILL");
  }, graceMs);
  return () => clearTimeout(timer);
}
