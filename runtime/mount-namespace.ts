/**
 * The runtime's own mount namespace: a root runtime re-executes itself (same pid, same arguments)
 * under `unshare --mount --propagation slave`, so the sandboxes' disks it mounts exist in its
 * namespace alone (what the host mounts later still reaches it; nothing of its own reaches the
 * host). A runtime killed outright (SIGKILL, no chance to unmount) then leaves no mount behind: the
 * namespace, and every mount in it, goes with the last of its processes (the runtime,
 * the container servers that stop when it is gone, what their sandboxes started), and each loop
 * device, attached with autoclear by `mount -o loop`, detaches when its last mount goes.
 *
 * The host's other processes do not see into a sandbox's disk any more; who must (a test reading a
 * sandbox's files) reads through the runtime's root, `/proc/<runtime pid>/root/<path>`, which is
 * resolved in the runtime's namespace. Where this cannot be had (not root, no unshare, no
 * CAP_SYS_ADMIN, a Node without process.execve) the runtime runs where it is, as before.
 */
import { spawnSync } from "node:child_process";
import { findExecutable } from "../server-kit/executables.ts";

/** Set in the re-executed runtime's environment (and taken out at once): it is in its namespace. */
const ENTERED_VAR = "SANDBOX_OWN_MOUNT_NAMESPACE";

const SYSTEM_DIRS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/**
 * Re-executes this process in a private mount namespace of its own, or returns: when it is in one
 * already, or when it cannot be (then why, for the runtime to say).
 */
export function enterOwnMountNamespace(): string | undefined {
  if (process.env[ENTERED_VAR] === "1") {
    // Its children (container servers, wrangler) are in it already: nothing for them to act on.
    delete process.env[ENTERED_VAR];
    return undefined;
  }
  if (process.getuid?.() !== 0) return "the runtime is not root";
  if (typeof process.execve !== "function") return "this Node cannot re-execute itself (process.execve)";
  const unshare = findExecutable("unshare", [...(process.env.PATH ?? "").split(":"), ...SYSTEM_DIRS]);
  if (unshare === undefined) return "unshare is missing (apt-get install util-linux)";
  // A root without CAP_SYS_ADMIN (in a container) cannot: asked first, as a failed exec would end the runtime.
  if (spawnSync(unshare, ["--mount", "--propagation", "slave", "true"], { stdio: "ignore" }).status !== 0) return "unshare --mount is refused here";
  process.execve(unshare, [unshare, "--mount", "--propagation", "slave", "--", process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    ...process.env,
    [ENTERED_VAR]: "1",
  });
  return "the runtime could not re-execute itself";
}
