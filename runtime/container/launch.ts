/**
 * How the runtime starts a sandbox's container: one bubblewrap with its namespaces (user, mount, pid,
 * ipc, uts, network), made once and kept until the sandbox sleeps or is destroyed. The container
 * server runs inside it, as in production, with root's name and the image's paths, and runs every
 * command there as it is: processes a command leaves behind live on beside the next command, as in a
 * container. bwrap's own init is PID 1 and reaps orphans (tini's job in the image).
 *
 * The server's listening socket is bound on the host's loopback by the runtime and handed in as a
 * descriptor, so the Durable Object reaches it while the container's own network holds only loopback
 * (or slirp4netns's way out, attached from outside: network.ts). bwrap reads its options from a
 * descriptor too, so `ps` inside shows no host path, and the seccomp filter every process in the
 * container runs under (seccomp.ts: no setuid or setgid file) from another.
 */
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { BUNDLE_ENTRY } from "../../server-kit/bundle-layout.ts";
import { ASSIGNMENT_FROM_STDIN_VAR } from "../../protocol/runtime.ts";
import { DEFAULT_PATH } from "../../server-kit/default-path.ts";
import { serverNodeFlags } from "../../server-kit/node-flags.ts";
import type { Launch } from "../launch.ts";
import { ownTree, type HostUser } from "./host-users.ts";
import { freshLayer } from "./layer.ts";
import { appBinds, serverFiles } from "./server-files.ts";
import { containerMounts, NAMESPACE_ARGS } from "./mounts.ts";
import { setuidFilter } from "./seccomp.ts";

/** Where things are inside a container: as container/Dockerfile lays them out. */
export const CONTAINER_PATHS = { workspace: "/workspace", home: "/root", node: "/usr/local/bin/node", app: "/app" } as const;

/** The server's descriptor for bwrap's options (3 is the status pipe, 4 the listening socket). */
const ARGS_FD = 5;
/** The descriptor bwrap reads the container's seccomp filter from (seccomp.ts). */
const SECCOMP_FD = 6;

export interface ContainerLaunchOptions {
  /** The folder holding the container's `workspace` and `layer`. */
  dir: string;
  /** Host user the container runs as (undefined: the runtime's own). */
  user: HostUser | undefined;
  bwrap: string;
  /** A built image's root file system to run on (SANDBOX_ROOTFS); default the host's system folders and this checkout's server. */
  rootfs?: string;
  /** The container server's bundle on the host (container/boot/bundle.ts; undefined: it could not be made). Host system only. */
  serverBundle: string | undefined;
  readOnly: readonly string[];
  readWrite: readonly string[];
  systemBinaries: boolean;
  extraArgs: readonly string[];
  limits: LaunchLimits;
  /** Stage the server's files (server-files.ts) even where the checkout is reachable, or elsewhere. */
  stageServer?: { force?: boolean; stageRoot?: string };
}

/** What the launch wrapper applies before bwrap runs, so everything in the container is bound by it. */
export interface LaunchLimits {
  openFiles: number;
  /** Processes of the container's host user at most (only where that user is the container's alone and no pids group counts them). */
  processes?: number;
  /** `cgroup.procs` files to join. */
  joinGroups: readonly string[];
  /** The container's groups, shown inside read-only: host folder → in-container path. */
  groupBinds: readonly [string, string][];
}

export interface PreparedContainer {
  launch: Launch;
  /** Closes the runtime's copies of what the child inherited; call once it is spawned. */
  release(): void;
}

export async function prepareContainer(options: ContainerLaunchOptions): Promise<PreparedContainer> {
  const workspace = join(options.dir, "workspace");
  mkdirSync(workspace, { recursive: true, mode: 0o755 });
  if (options.user) {
    // The container's user walks into its folder by group; nobody else on the machine can.
    chownSync(options.dir, 0, options.user.gid);
    chmodSync(options.dir, 0o710);
    ownTree(workspace, options.user);
  }
  const layer = freshLayer(join(options.dir, "layer"), options.user, options.rootfs ?? "/");

  const onHost = options.rootfs === undefined;
  if (onHost && options.serverBundle === undefined) throw new Error("the container server's bundle could not be made (the runtime's log says why)");
  const files = onHost ? serverFiles({ node: process.execPath, bundle: options.serverBundle! }, options.stageServer ?? {}) : undefined;
  const entry = files ? join(CONTAINER_PATHS.app, BUNDLE_ENTRY) : imageServerEntry(options.rootfs!);
  const mounts = containerMounts({
    systemRoot: options.rootfs ?? "/",
    workspace,
    layer,
    // On the host's system, this checkout's Node and server; an image brings its own (its /usr/local among them).
    ...(files ? { node: files.node, app: appBinds(files.bundle) } : { keepUsrLocal: true, rootDirs: [CONTAINER_PATHS.app] }),
    readOnly: options.readOnly,
    readWrite: options.readWrite,
    systemBinaries: options.systemBinaries,
    extraArgs: options.extraArgs,
    groupBinds: options.limits.groupBinds,
  });
  let listener: { server: Server; fd: number; port: number } | undefined;
  let argsFd: number | undefined;
  let filterFd: number | undefined;
  try {
    listener = await loopbackListener();
    filterFd = unlinkedDescriptor(options.dir, "seccomp", setuidFilter());
    argsFd = unlinkedDescriptor(options.dir, "bwrap-args", [...mounts, ...NAMESPACE_ARGS, "--seccomp", String(SECCOMP_FD)].map((arg) => `${arg}\0`).join(""));
  } catch (error) {
    listener?.server.close();
    if (filterFd !== undefined) closeSync(filterFd);
    throw error;
  }
  const flags = serverNodeFlags([]);
  const launch: Launch = {
    command: "/bin/sh",
    args: ["-c", limitScript(options.limits), "sh", ...options.limits.joinGroups, "--", options.bwrap, "--args", String(ARGS_FD), "--", CONTAINER_PATHS.node, ...flags, entry],
    env: { PATH: DEFAULT_PATH, HOME: CONTAINER_PATHS.home, [ASSIGNMENT_FROM_STDIN_VAR]: "1" },
    cwd: "/",
    fds: [listener.fd, argsFd, filterFd],
    ...(options.user ? { user: options.user } : {}),
    serverDepth: 2,
    port: listener.port,
  };
  const server = listener.server;
  const opened = [argsFd, filterFd];
  return {
    launch,
    release() {
      server.close();
      for (const fd of opened) closeSync(fd);
    },
  };
}

/**
 * The launch wrapper: joins the container's groups (each named before a `--`), lowers its rlimits,
 * then becomes bwrap. Everything the container ever starts descends from it, inside those bounds.
 */
function limitScript(limits: LaunchLimits): string {
  // A limit lowered only: where the host's hard limit is already lower, that one stays.
  const lower = (flags: string[], value: number) => `{ ${flags.map((flag) => `ulimit -${flag} ${value} 2>/dev/null`).join(" || ")} || :; }; `;
  // Processes are -u to bash and -p to dash (Debian's /bin/sh).
  const processes = limits.processes === undefined ? "" : lower(["u", "p"], limits.processes);
  return `while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; ${lower(["n"], limits.openFiles)}${processes}exec "$@"`;
}

/**
 * The server an image built from container/Dockerfile runs: the entry of the bundle its build made
 * (its /app), started directly, as the local runtime starts a checkout's (the image's start script
 * is not needed, and a server that re-executed itself would lose the descriptors handed to it).
 */
function imageServerEntry(rootfs: string): string {
  const entry = join(CONTAINER_PATHS.app, BUNDLE_ENTRY);
  if (!existsSync(join(rootfs, entry))) throw new Error(`${rootfs} holds no container server bundle (${entry}): is it an image of container/Dockerfile?`);
  return entry;
}

/**
 * A socket listening on the host's loopback, for the server inside to accept on. The runtime's copy
 * is closed right after the spawn; until then it holds incoming connections unaccepted.
 */
async function loopbackListener(): Promise<{ server: Server; fd: number; port: number }> {
  const server = createServer({ pauseOnConnect: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port: 0, host: "127.0.0.1", backlog: 511 }, () => resolve());
  });
  const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== "number" || fd < 0) {
    server.close();
    throw new Error("this Node does not expose a listening socket's descriptor");
  }
  return { server, fd, port: (server.address() as { port: number }).port };
}

/** What bwrap reads (its NUL-separated options, the filter) behind a descriptor: a file removed at once, only the child reads it. */
function unlinkedDescriptor(dir: string, name: string, content: string | Buffer): number {
  const file = join(dir, `.${name}-${process.pid}-${Date.now()}`);
  writeFileSync(file, content, { mode: 0o600 });
  try {
    return openSync(file, "r");
  } finally {
    rmSync(file, { force: true });
  }
}
