/**
 * Commands the runtime starts in a sandbox's network namespace (its setup helper, `nft -f`, and the
 * `nft monitor` that lives as long as the namespace is served) end when the runtime does, however it
 * ends: setpriv gives each a parent-death signal, SIGKILL, and execs it. Such a process is the
 * host's root in that namespace, and holds it: one left behind by a runtime that was killed outright
 * would keep a dead sandbox's namespace pinned for good. setpriv runs after nsenter, right before the
 * command, so that entering a user namespace (which changes credentials, and clears the signal) comes
 * before it is set.
 */

/** `command`, run so that it is killed when its parent (the runtime) exits. */
export function boundToRuntime(setpriv: string, command: readonly string[]): string[] {
  return [setpriv, "--pdeathsig", "KILL", "--", ...command];
}
