/**
 * The bubblewrap command line for one command. What the command sees:
 *   - the system directories read-only (when allowSystemBinaries), so programs run;
 *   - the workspace read-write at its own path, the configured read-only / read-write paths;
 *   - a /tmp (and a HOME) private to this sandbox that persist across its commands, and nothing
 *     else writable (the root is remounted read-only);
 *   - its own pid namespace and /proc (no host processes); the sandbox's own network namespace,
 *     shared by all its commands and entered before bwrap starts (network.ts): loopback only unless
 *     network is allowed, never the host's;
 *   - its own user namespace, where it runs as SANDBOX_UID, the one id mapped (to the server's user);
 *     so it holds no capabilities, cannot become root of the host, and bind mounts are nosuid;
 *   - no capabilities, so it cannot remount its way out.
 * bwrap does not call setsid (no --new-session): the engine's process group then holds bwrap and
 * everything under it, and a group kill reaches them all. Whatever leaves the group still dies with
 * the pid namespace when bwrap goes.
 */
import { lstatSync, readlinkSync } from "node:fs";
import type { IsolationOptions } from "../../protocol/isolation.ts";

/**
 * The user and group commands run as: an ordinary unprivileged id (the first regular user of most
 * distributions), whatever user the server runs as on the host.
 */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;

/** Host directories a program needs to run. Symlinks among them (merged /usr) are recreated as links. */
export const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

export interface BwrapLayout {
  binary: string;
  options: IsolationOptions;
  workspace: string;
  /** Host directory mounted as the sandbox's /tmp. */
  tmpSource: string;
  /** The sandbox's HOME and the host directory behind it (absent when HOME is already visible). */
  home?: { path: string; source: string };
}

/** Computed once per server: the mounts do not change between commands. `extraMounts` are more bwrap mount arguments. */
export function bwrapBaseArgs(layout: BwrapLayout, extraMounts: readonly string[] = []): string[] {
  const { options } = layout;
  const args: string[] = [];
  if (options.allowSystemBinaries) {
    for (const dir of SYSTEM_PATHS) {
      const stats = lstatOrUndefined(dir);
      if (!stats) continue;
      if (stats.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
      else if (stats.isDirectory()) args.push("--ro-bind", dir, dir);
    }
  }
  args.push("--proc", "/proc", "--dev", "/dev");
  args.push("--bind", layout.tmpSource, "/tmp");
  if (layout.home) args.push("--bind", layout.home.source, layout.home.path);
  for (const p of options.readOnlyPaths) args.push("--ro-bind", p, p);
  for (const p of options.readWritePaths) args.push("--bind", p, p);
  args.push("--bind", layout.workspace, layout.workspace);
  args.push(...extraMounts, ...options.bwrapArgs);
  // The root itself is bwrap's scratch tmpfs: read-only once every mount point exists.
  args.push("--remount-ro", "/");
  args.push("--unshare-user", "--uid", String(SANDBOX_UID), "--gid", String(SANDBOX_GID));
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  args.push("--hostname", "sandbox", "--die-with-parent", "--cap-drop", "ALL");
  return args;
}

/**
 * The full argv: bwrap, the mounts, the working directory, the program. `extraMounts` (for this
 * command only) go before the root is remounted read-only, which their mount points need.
 */
export function bwrapCommand(
  layout: BwrapLayout,
  baseArgs: readonly string[],
  command: { file: string; args: readonly string[]; cwd: string },
  extraMounts: readonly string[] = [],
): { file: string; args: string[] } {
  const remount = extraMounts.length === 0 ? -1 : baseArgs.lastIndexOf("--remount-ro");
  const mounts = remount === -1 ? [...baseArgs] : [...baseArgs.slice(0, remount), ...extraMounts, ...baseArgs.slice(remount)];
  return { file: layout.binary, args: [...mounts, "--chdir", command.cwd, "--", command.file, ...command.args] };
}

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}
