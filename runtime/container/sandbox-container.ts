/**
 * A sandbox's container as the runtime's pool deals with it: started cold for a sandbox, or booted
 * ahead (warm, for no sandbox yet) and later adopted by one. Either way the same walls: a warm
 * container is taken only by a sandbox that asks for nothing beyond the runtime's defaults (extra
 * host paths are bound when a container starts, so those sandboxes start cold), and the network a
 * sandbox is allowed is attached at assignment, from outside.
 *
 * The server inside is told its sandbox on stdin (protocol ServerAssignment): the in-container paths,
 * the sandbox's env vars, and the walls it sits in, which it reports as its isolation.
 */
import { existsSync, fstatSync, readdirSync, renameSync, rmSync, rmdirSync, statSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { basename, join } from "node:path";
import type { IsolationInEffect, IsolationOptions } from "../../protocol/isolation.ts";
import { ISOLATION_ENV } from "../../protocol/isolation.ts";
import { CA_BUNDLE_VAR } from "../../protocol/network.ts";
import { LISTEN_FD_VAR, SERVER_LISTEN_FD } from "../../protocol/runtime.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { containerEnv, serverBundle } from "../launch.ts";
import { ServerChild } from "../server-child.ts";
import { assertReachable } from "./reachable.ts";
import { ownTree, type HostUser, type HostUsers } from "./host-users.ts";
import { CONTAINER_PATHS, prepareContainer } from "./launch.ts";
import { describeMechanism, makeSandboxGroup, type LimitsMechanism, type SandboxGroup } from "./cgroups.ts";
import type { SandboxLimits } from "./limits.ts";
import type { EgressRegistry } from "../egress/registry.ts";
import { trustEgressAuthority } from "./layer.ts";
import { closeHandles, openPathHandle, type PathHandle } from "./path-handle.ts";
import { hasWorkspace, type SandboxDisk, type SandboxDisks } from "./disk.ts";

/** What every container of one runtime shares. */
export interface ContainerSettings {
  users: HostUsers;
  bwrap: string;
  /** Why bubblewrap cannot make containers here, if it cannot. */
  unavailable?: string;
  /** slirp4netns, for the container server's own bwrap mode (undefined: not installed). */
  slirp4netns: string | undefined;
  /** Every sandbox's way out: the egress proxy and its policies. */
  egress: EgressRegistry;
  /** A built image's root file system (SANDBOX_ROOTFS); default the host's system and this checkout's server. */
  rootfs?: string;
  /** Where allowed host paths may lie (the operator's SANDBOX_ALLOWED_PATHS). */
  allowedPaths: readonly string[];
  /** The runtime's data folder: no sandbox may mount any of it. */
  dataDir: string;
  /** Stage the server's files even where the checkout is reachable (tests of the staging), or elsewhere. */
  stageServer?: { force?: boolean; stageRoot?: string };
  /** What each sandbox may take, and how that is enforced here. */
  limits: SandboxLimits;
  mechanism: () => LimitsMechanism;
  /** The disk each container writes on (disk.ts). */
  disks: SandboxDisks;
}

/** A container server with what the runtime lent it: its host user and, once assigned, its network. */
export interface ContainerRun {
  server: ServerChild;
  user: HostUser | undefined;
  /** Checks that what the container bound is what was checked; throws if not. */
  verify?: () => Promise<void>;
  network?: { close(): void };
  /** The disk it writes on, where sandboxes have disks of their own. */
  disk?: SandboxDisk;
  /** Sets its share of contended CPU, where a control group holds it (a warm one waits with the least). */
  weigh?: (cpuWeight: number) => void;
}

/** Whether a sandbox with these options may take a warm container (booted with the runtime's defaults). */
export function fitsWarm(options: IsolationOptions): boolean {
  return options.readOnlyPaths.length === 0 && options.readWritePaths.length === 0 && options.bwrapArgs.length === 0 && options.allowSystemBinaries;
}

/**
 * Boots a container in `dir` that waits for its sandbox, on `disk` (mounted at `dir`) where it has one.
 * The disk is unmounted when the container exits, or if it cannot start. `env`: added to its server's.
 */
export async function spawnContainer(
  settings: ContainerSettings,
  dir: string,
  options: IsolationOptions,
  preferredUid?: number,
  disk?: SandboxDisk,
  cpuWeight = settings.limits.cpuWeight,
  env: Readonly<Record<string, string>> = {},
): Promise<ContainerRun> {
  try {
    return await spawnOnDisk(settings, dir, options, preferredUid, disk, cpuWeight, env);
  } catch (error) {
    disk?.release();
    throw error;
  }
}

async function spawnOnDisk(
  settings: ContainerSettings,
  dir: string,
  options: IsolationOptions,
  preferredUid: number | undefined,
  disk: SandboxDisk | undefined,
  cpuWeight: number,
  env: Readonly<Record<string, string>>,
): Promise<ContainerRun> {
  if (settings.unavailable) {
    throw new ServiceError("ISOLATION_UNAVAILABLE", `isolation "bwrap" was asked for but is not available: ${settings.unavailable}`, {
      isolation: "bwrap",
      reason: settings.unavailable,
    });
  }
  if (settings.users.switching) {
    try {
      // The server's own files are staged where they must be (server-files.ts); the sandbox's folder cannot be.
      assertReachable([dir, ...(settings.rootfs ? [settings.rootfs] : [])]);
    } catch (error) {
      throw new ServiceError("CONTAINER_UNAVAILABLE", (error as Error).message);
    }
  }
  const readOnly: CheckedPath[] = [];
  const readWrite: CheckedPath[] = [];
  for (const path of options.readOnlyPaths) readOnly.push(checkedPath(settings, path, "readOnlyPaths"));
  for (const path of options.readWritePaths) readWrite.push(checkedPath(settings, path, "readWritePaths"));
  const user = await settings.users.take(preferredUid, readWrite.map((checked) => checked.path));
  const mechanism = settings.mechanism();
  let group: SandboxGroup | undefined;
  try {
    group = makeSandboxGroup(mechanism, `sandbox-${randomUUID()}`, { ...settings.limits, cpuWeight }, user);
    const prepared = await prepareContainer({
      dir,
      user,
      bwrap: settings.bwrap,
      ...(settings.rootfs ? { rootfs: settings.rootfs } : {}),
      serverBundle: settings.rootfs ? undefined : await serverBundle(),
      readOnly: readOnly.map((checked) => checked.path),
      readWrite: readWrite.map((checked) => checked.path),
      systemBinaries: options.allowSystemBinaries,
      extraArgs: options.bwrapArgs,
      ...(settings.stageServer ? { stageServer: settings.stageServer } : {}),
      limits: {
        openFiles: settings.limits.openFiles,
        // Where a pids group counts the container's processes, it alone bounds them. Elsewhere the
        // processes of its host uid do, which are the container's alone where it has a uid of its own.
        ...(mechanism.kind === "rlimits" && settings.users.switching ? { processes: settings.limits.pids } : {}),
        joinGroups: group?.procsFiles ?? [],
        groupBinds: group?.binds ?? [],
      },
    });
    let server: ServerChild;
    try {
      server = new ServerChild(prepared.launch, dir, env, { bootedPipe: true });
    } finally {
      prepared.release();
    }
    const made = group;
    void server.exited.then(() => {
      made?.remove();
      disk?.release();
      void settings.users.release(user);
    });
    const checked = [...readOnly, ...readWrite];
    return { server, user, verify: () => verifyBinds(server, checked), ...(disk ? { disk } : {}), ...(made ? { weigh: made.weigh } : {}) };
  } catch (error) {
    group?.remove();
    void settings.users.release(user);
    throw error;
  }
}

/**
 * Starts a container for the sandbox whose folder is `sandboxDir` (its workspace kept, its layer made
 * anew), on its own disk where sandboxes have disks.
 */
export async function spawnColdContainer(settings: ContainerSettings, sandboxDir: string, options: IsolationOptions): Promise<ContainerRun> {
  const disk = await settings.disks.open(sandboxDir, basename(sandboxDir));
  const workspace = join(sandboxDir, "workspace");
  // The uid the workspace already belongs to, where free: then no file needs a new owner.
  const owner = existsSync(workspace) ? statSync(workspace).uid : undefined;
  return spawnContainer(settings, sandboxDir, options, owner, disk);
}

/**
 * Whether the sandbox in `sandboxDir` may take a warm container: always where sandboxes have no disks
 * of their own (its workspace moves into the container's); where they have, only while it has written
 * nothing yet (the warm container's disk becomes its own, and a disk's files cannot move by rename).
 */
export function mayTakeWarm(settings: ContainerSettings, sandboxDir: string): boolean {
  if (settings.disks.unavailable) return true;
  return !settings.disks.has(basename(sandboxDir)) && !hasWorkspace(sandboxDir);
}

/**
 * Makes a warm container (booted in its own folder) the sandbox's: the sandbox's workspace moves into
 * the one the container has bound (entry by entry: a rename each), then the container's folders take
 * the sandbox's place. Nothing of the sandbox runs meanwhile: its last container has exited.
 */
export async function adoptWarm(run: ContainerRun, sandboxDir: string, ephemeral: boolean): Promise<void> {
  if (run.disk) {
    // Its disk, the container's folders on it, becomes the sandbox's (mayTakeWarm: it has none yet).
    await run.disk.adopt(sandboxDir, basename(sandboxDir));
    run.server.folderMoved(sandboxDir);
    return;
  }
  const warmDir = join(run.server.logPath, "..");
  const workspace = join(sandboxDir, "workspace");
  const warmWorkspace = join(warmDir, "workspace");
  if (existsSync(workspace)) {
    if (ephemeral) rmSync(workspace, { recursive: true, force: true });
    else {
      if (run.user) ownTree(workspace, run.user);
      for (const name of readdirSync(workspace)) renameSync(join(workspace, name), join(warmWorkspace, name));
      rmdirSync(workspace);
    }
  }
  rmSync(join(sandboxDir, "layer"), { recursive: true, force: true });
  renameSync(warmWorkspace, workspace);
  renameSync(join(warmDir, "layer"), join(sandboxDir, "layer"));
  run.server.moveTo(sandboxDir);
  rmSync(warmDir, { recursive: true, force: true });
}

/** The server's environment for its sandbox: the image's and the sandbox's env vars, the image's paths, then the walls (last: nothing above loosens them). */
export function containerServerEnv(key: string, sandboxEnv: Record<string, string>, walls: IsolationInEffect, trustBundle?: string): Record<string, string> {
  return {
    ...containerEnv(sandboxEnv),
    WORKSPACE: CONTAINER_PATHS.workspace,
    SANDBOX_HOME: CONTAINER_PATHS.home,
    SANDBOX_ID: key,
    [LISTEN_FD_VAR]: String(SERVER_LISTEN_FD),
    // The container is the wall: the server runs commands as they are, and says which walls hold.
    [ISOLATION_ENV.mode]: "none",
    [ISOLATION_ENV.readOnlyPaths]: JSON.stringify(walls.readOnlyPaths),
    [ISOLATION_ENV.readWritePaths]: JSON.stringify(walls.readWritePaths),
    [ISOLATION_ENV.containerWalls]: JSON.stringify(walls),
    ...(trustBundle ? { [CA_BUNDLE_VAR]: trustBundle } : {}),
  };
}

/** The walls a container with these options has. */
export function containerWalls(options: IsolationOptions, user: HostUser | undefined, version: string | undefined, settings: ContainerSettings): IsolationInEffect {
  return {
    mode: "bwrap",
    allowNetwork: options.allowNetwork,
    readOnlyPaths: options.readOnlyPaths,
    readWritePaths: options.readWritePaths,
    allowSystemBinaries: options.allowSystemBinaries,
    pidNamespace: true,
    container: true,
    ...(user ? { hostUid: user.uid } : {}),
    ...(version ? { version } : {}),
    limits: reportedLimits(settings),
  };
}

/** The limits a container is held to, as reported: its disk only where it has one of that size. */
export function reportedLimits(settings: ContainerSettings): NonNullable<IsolationInEffect["limits"]> {
  const { diskBytes, ...rest } = settings.limits;
  return { ...rest, ...(settings.disks.unavailable ? {} : { diskBytes }), enforcedBy: describeMechanism(settings.mechanism()) };
}

/**
 * Gives the container its way out, if the sandbox may have one: the egress proxy, the only way out
 * of its namespace (../egress/), and the proxy's authority in its trust bundle. Returns the bundle's
 * path inside, for the server to point commands at.
 */
export async function connectContainer(settings: ContainerSettings, run: ContainerRun, key: string, sandboxDir: string): Promise<string> {
  const unavailable = settings.egress.unavailable;
  if (unavailable) throw new ServiceError("ISOLATION_UNAVAILABLE", unavailable, { isolation: "bwrap", reason: unavailable });
  const inside = processInside(run.server);
  if (inside === undefined) throw new Error("the container is gone before its network could be attached");
  const attached = await settings.egress.attach(key, inside);
  run.network = attached;
  void run.server.exited.then(() => attached.close());
  return trustEgressAuthority(join(sandboxDir, "layer"), settings.rootfs ?? "/", attached.caPem);
}

/** A process inside the container (its server), whose namespaces the network joins. */
function processInside(server: ServerChild): number | undefined {
  const pid = server.serverPid;
  return pid === server.child.pid ? undefined : pid;
}

/**
 * Opens an allowed host path as a handle and checks the object it holds: under an allowed root, and
 * not inside the runtime's data folder (another sandbox's writable files).
 */
function checkedPath(settings: ContainerSettings, path: string, field: string): CheckedPath {
  let handle: PathHandle;
  try {
    handle = openPathHandle(path);
  } catch (error) {
    throw new ServiceError("INVALID_REQUEST", `${field}: ${path} cannot be opened without following a link (${(error as NodeJS.ErrnoException).code})`, {
      field,
      path,
    });
  }
  const real = handle.realPath;
  const allowed = settings.allowedPaths.some((root) => within(real, root)) && !within(real, settings.dataDir) && !within(settings.dataDir, real);
  if (!allowed) {
    closeHandles([handle]);
    throw new ServiceError("ISOLATION_NOT_ALLOWED", `${field}: ${path} is not under a path the operator allows sandboxes to mount`, { field, path });
  }
  const stats = fstatSync(handle.fd);
  closeHandles([handle]);
  return { path: real, dev: stats.dev, ino: stats.ino };
}

/** A host path as it was checked: where it is, and the object it was then. */
interface CheckedPath {
  path: string;
  dev: number;
  ino: number;
}

/**
 * bubblewrap finds what it binds by path again, a moment after the check: what the container got is
 * compared with what was checked, through the container's own view of its mount point
 * (/proc/<pid>/root), before anyone is handed the container. A swap in between is refused.
 */
async function verifyBinds(server: ServerChild, checked: readonly CheckedPath[]): Promise<void> {
  if (checked.length === 0) return;
  await Promise.race([server.booted, server.exited]);
  const pid = server.serverPid;
  for (const expected of checked) {
    const seen = pid === undefined ? undefined : statSync(`/proc/${pid}/root${expected.path}`, { throwIfNoEntry: false });
    if (!seen || seen.dev !== expected.dev || seen.ino !== expected.ino) {
      throw new ServiceError("ISOLATION_NOT_ALLOWED", `${expected.path} changed between its check and its mount: refused`, { path: expected.path });
    }
  }
}

function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);
}
