/**
 * The file system a program sees inside a sandbox's container: the image's layout. System folders
 * (the host's, or the built image's root file system) read-only; /workspace; the writable layer
 * (/tmp, /var, /root, /home, /opt, /srv, /mnt, /run, /usr/local); /etc with the container's own
 * hostname, hosts and DNS; the operator-allowed host paths at their own paths (checked through an open
 * handle first: path-handle.ts). bwrap resolves every source by path as the container's own host
 * user, so a source is reachable only where that user may walk. The root itself is a folder of the
 * layer (on disk, as a container's root is: writable, as on Cloudflare, and made anew each start):
 * bwrap makes every mount point in it, and a mount point in use can be neither removed nor renamed,
 * so a program may write beside the system folders but never move one aside.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { CONTAINER_HOSTNAME, ETC_FILES, LAYER_DIRS, LAYER_ROOT } from "./layer.ts";

/** Top-level folders of a Debian root that programs need; links among them (merged /usr) stay links. */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"];

export interface MountPlan {
  /** Root file system to take the system folders from: "/" (the host's) or a built image's. */
  systemRoot: string;
  workspace: string;
  layer: string;
  /** Host file bound as /usr/local/bin/node (the host root's Node is not the image's). */
  node?: string;
  /** Host folders bound read-only under /app (the container server's code: the image keeps it there). */
  app?: Record<string, string>;
  /** Host paths the operator allows, already checked (their real paths): each bound at its own path. */
  readOnly: readonly string[];
  readWrite: readonly string[];
  /** False hides the system folders (SANDBOX_ALLOW_SYSTEM_BINARIES=0): only what the sandbox brings runs. */
  systemBinaries: boolean;
  /** More top-level folders of the system root bound read-only (an image's /app, where its server lives). */
  rootDirs?: readonly string[];
  /** Leave the system's /usr/local as it is (an image's holds its Node) instead of the layer's. */
  keepUsrLocal?: boolean;
  /** The container's control groups, read-only where a container sees its own (host folder → path). */
  groupBinds?: readonly (readonly [string, string])[];
  /** The operator's own bwrap arguments (SANDBOX_BWRAP_ARGS), after the mounts. */
  extraArgs: readonly string[];
}

export function containerMounts(plan: MountPlan): string[] {
  const args: string[] = [];
  const bind = (kind: "--bind" | "--ro-bind", source: string, dest: string) => args.push(kind, source, dest);

  // First: every later mount point is made in it (not in bwrap's scratch tmpfs, which is memory).
  bind("--bind", join(plan.layer, LAYER_ROOT.name), "/");

  if (plan.systemBinaries) {
    for (const dir of SYSTEM_DIRS) {
      const source = join(plan.systemRoot, dir);
      const stats = lstatSync(source, { throwIfNoEntry: false });
      if (!stats) continue;
      if (stats.isSymbolicLink()) args.push("--symlink", readlinkSync(source), dir);
      else if (stats.isDirectory()) bind("--ro-bind", source, dir);
    }
    // The machine's identity, over the image's /etc (only where the image has a plain file to cover).
    for (const name of ETC_FILES) {
      if (lstatSync(join(plan.systemRoot, "etc", name), { throwIfNoEntry: false })?.isFile()) {
        bind("--ro-bind", join(plan.layer, "etc", name), `/etc/${name}`);
      }
    }
  }
  for (const dir of plan.rootDirs ?? []) bind("--ro-bind", join(plan.systemRoot, dir), dir);
  args.push("--proc", "/proc", "--dev", "/dev");
  for (const { name, path } of LAYER_DIRS) {
    if (path === "/usr/local" && plan.keepUsrLocal) continue;
    // /usr/local needs /usr to hold its mount point: without system folders it is made in the root.
    bind("--bind", join(plan.layer, name), path);
  }
  if (plan.node) bind("--ro-bind", plan.node, "/usr/local/bin/node");
  if (plan.app) {
    // A folder of mount points only, read-only as the image's /app is, and a mount point itself, so
    // the server's code cannot be moved aside from under it (a folder of the root could be).
    args.push("--tmpfs", "/app");
    for (const [name, source] of Object.entries(plan.app)) bind("--ro-bind", source, `/app/${name}`);
    args.push("--remount-ro", "/app");
  }
  for (const path of plan.readOnly) bind("--ro-bind", path, path);
  for (const path of plan.readWrite) bind("--bind", path, path);
  bind("--bind", plan.workspace, "/workspace");
  for (const [source, dest] of plan.groupBinds ?? []) bind("--ro-bind", source, dest);
  args.push(...plan.extraArgs);
  return args;
}

/** The namespaces of a container, made once when it starts: root inside, unprivileged outside. */
export const NAMESPACE_ARGS = [
  "--unshare-user", "--uid", "0", "--gid", "0",
  "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try",
  "--hostname", CONTAINER_HOSTNAME,
  "--cap-drop", "ALL",
  "--die-with-parent",
  "--chdir", "/workspace",
];
