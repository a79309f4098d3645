/**
 * Signals for whole process trees. Each process leads its own group (spawned detached), so
 * `kill(-pgid)` reaches grandchildren too; what left the group (`setsid`, a double fork) still
 * carries the command's run tag, so the tagged processes are signalled alongside. A kill is the
 * asked-for signal, then SIGKILL to whatever is still alive after the grace period — even if the
 * leader already exited.
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

/** Sends `signal` to each pid, ignoring ones already gone. How many were signalled. */
export function signalPids(pids: readonly number[], signal: NodeJS.Signals): number {
  let signalled = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
      signalled++;
    } catch {
      // already gone
    }
  }
  return signalled;
}

/**
 * Signal the group and the processes `tagged()` finds now; SIGKILL after `graceMs` to whatever of
 * them survives. Returns a cancel function.
 */
export function terminateTree(pgid: number, tagged: () => number[], signal: NodeJS.Signals, graceMs: number): () => void {
  const delivered = signalGroup(pgid, signal);
  const strays = signalPids(tagged(), signal);
  if ((!delivered && strays === 0) || signal === "SIGKILL") return () => {};
  const timer = setTimeout(() => {
    if (groupAlive(pgid)) signalGroup(pgid, "SIGKILL");
    signalPids(tagged(), "SIGKILL");
  }, graceMs);
  return () => clearTimeout(timer);
}

/** Signal what `tagged()` finds now, SIGKILL what of it is left after `graceMs` (not cancelled: strays have no record). */
export function terminateTagged(tagged: () => number[], signal: NodeJS.Signals, graceMs: number): void {
  if (signalPids(tagged(), signal) === 0 || signal === "SIGKILL") return;
  setTimeout(() => signalPids(tagged(), "SIGKILL"), graceMs).unref();
}
