/**
 * The local container runtime: an HTTP service on loopback that the Sandbox Durable Object's
 * stand-in `ctx.container` calls to start, watch, signal and destroy one container server per
 * sandbox (routes in routes.ts, contract in protocol/runtime.ts). It answers only to its secret.
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { makeFolder } from "./folders.ts";
import { join, resolve } from "node:path";
import type { IsolationMode } from "../protocol/isolation.ts";
import type { StartRefusal } from "../protocol/runtime.ts";
import { Router } from "../server-kit/http/router.ts";
import { detectIsolation } from "../server-kit/detect-isolation.ts";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { carriesSecret, newSecret } from "../server-kit/http/bearer.ts";
import { carryWorkerUpgrade } from "./egress/worker-carrier.ts";
import { listen, routeRequests } from "../server-kit/http/serve.ts";
import { reapLeftovers } from "./container-process.ts";
import { PID_FILE, RUNS_DIR } from "./server-child.ts";
import { directLauncher, type Launcher } from "./launch.ts";
import { parseIsolationMode } from "./isolation.ts";
import type { OperatorPolicy } from "./policy.ts";
import { ContainerPool } from "./pool.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { containerSettings } from "./container/settings.ts";
import type { SandboxLimits } from "./container/limits.ts";
import { RUNTIME_ROUTES, WORKER_SEND_PATH, type RuntimeContext, type RuntimeRequest } from "./routes.ts";
import { TestHostMap, type TestHosts } from "./egress/test-hosts.ts";
import { startEngine, type RunningEngine } from "./docker-engine/socket.ts";

export interface RuntimeOptions {
  port?: number;
  host?: string;
  /** Where sandboxes keep their folders (default `.sandbox` in the working directory). */
  dataDir?: string;
  /**
   * The runtime's isolation (SANDBOX_ISOLATION): what sandboxes that ask for nothing get, and the
   * floor none may go below. Default: bwrap, which must then be available (`none` only when asked for).
   */
  isolation?: IsolationMode | string;
  /** Host paths sandboxes may mount (SANDBOX_ALLOWED_PATHS); default none. */
  allowedPaths?: readonly string[];
  /** Whether any sandbox may have outbound network (SANDBOX_NETWORK_ALLOWED); default true. */
  networkAllowed?: boolean;
  /** Live sandboxes at most (SANDBOX_MAX_SANDBOXES); default 32. */
  maxContainers?: number;
  /** Booted container servers kept ready for new sandboxes (SANDBOX_WARM_POOL); default 0. */
  warmServers?: number;
  /** bubblewrap binary the container servers use (default SANDBOX_BWRAP_PATH, else `bwrap` on PATH). */
  bwrapPath?: string;
  /** How container servers are launched (default: plain child processes). */
  launcher?: Launcher;
  startTimeoutMs?: number;
  stopGraceMs?: number;
  /** What every caller must present (`Authorization: Bearer …`); default: a fresh random one. */
  secret?: string;
  /** Each start begins with an empty workspace, as on Cloudflare (SANDBOX_EPHEMERAL_WORKSPACES=1); default: kept on disk. */
  ephemeralWorkspaces?: boolean;
  /**
   * A built image's root file system that containers run on (SANDBOX_ROOTFS), with its own tools and
   * server; default: the host's system folders and this checkout's server.
   */
  rootfs?: string;
  /** How long a sandbox must have been quiet before it may sleep to make room at the cap (default 5 s). */
  minQuietMs?: number;
  /** What each sandbox may take of the machine (SANDBOX_PIDS_MAX, …); default container/limits.ts. */
  limits?: SandboxLimits;
  /**
   * The egress proxy's test name map: host names sent to servers on this machine's loopback
   * (SANDBOX_EGRESS_TEST_HOSTS; tests only, see egress/test-hosts.ts).
   */
  egressTestHosts?: TestHosts;
  /** Called when a caller asks a container to stop (sleep, destroy): what `npm start`'s watch tells from a crash. */
  onStopAsked?: (key: string) => void;
}

export interface RunningRuntime {
  url: string;
  port: number;
  dataDir: string;
  /** The runtime's mode: the floor of every sandbox's isolation. */
  isolation: IsolationMode;
  pool: ContainerPool;
  /** The runtime's secret, for the one caller it serves (the Durable Object's SANDBOX_RUNTIME_SECRET). */
  secret: string;
  /** The Docker Engine API it also serves (docker-engine/), on a unix socket only its user may reach. */
  engine: RunningEngine;
  close(): Promise<void>;
}

export async function startRuntime(options: RuntimeOptions = {}): Promise<RunningRuntime> {
  const bwrapPath = options.bwrapPath ?? (process.env.SANDBOX_BWRAP_PATH || undefined);
  const isolation = parseIsolationMode(options.isolation, detectIsolation(bwrapPath === undefined ? {} : { bwrapPath }));
  const networkAllowed = options.networkAllowed ?? true;
  const dataDir = resolve(options.dataDir ?? ".sandbox");
  // Only its owner may reach what sandboxes keep (a file a command made setuid among it); the
  // folders above it that are made with it stay passable for containers' users.
  makeFolder(dataDir, 0o700);
  const containers = containerSettings({ dataDir, bwrapPath, allowedPaths: options.allowedPaths ?? [],
    ...(options.rootfs ? { rootfs: options.rootfs } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.egressTestHosts ? { egressTestHosts: new TestHostMap(options.egressTestHosts) } : {}),
  });
  if (options.egressTestHosts) console.warn(`runtime: the egress test name map is on (${Object.keys(options.egressTestHosts.hosts).join(", ")}): for tests only`);

  const unlock = lockDataDir(dataDir);
  const runs = join(dataDir, RUNS_DIR);
  const leftovers = [
    ...readdirSync(dataDir).map((name) => join(dataDir, name, PID_FILE)),
    ...(existsSync(runs) ? readdirSync(runs).map((name) => join(runs, name)) : []),
  ].filter((file) => existsSync(file));
  const reaped = reapLeftovers(leftovers);
  if (reaped > 0) console.warn(`runtime: stopped ${reaped} container server(s) left over from an earlier run`);
  // Disks an earlier run left mounted come off first: what is under them is the host's folder.
  containers.disks.reapLeftovers();
  // Warm servers of an earlier run never had a sandbox: nothing in their folders is anyone's.
  for (const name of readdirSync(dataDir)) if (name.startsWith(".warm-")) rmSync(join(dataDir, name), { recursive: true, force: true });

  const pool = new ContainerPool({
    dataDir,
    isolation: { mode: isolation, networkAllowed, ...(bwrapPath === undefined ? {} : { bwrapPath }) },
    launcher: options.launcher ?? directLauncher,
    ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
    ...(options.stopGraceMs === undefined ? {} : { stopGraceMs: options.stopGraceMs }),
    ...(options.maxContainers === undefined ? {} : { maxContainers: options.maxContainers }),
    ...(options.warmServers === undefined ? {} : { warmServers: options.warmServers }),
    ...(options.ephemeralWorkspaces === undefined ? {} : { ephemeralWorkspaces: options.ephemeralWorkspaces }),
    ...(options.minQuietMs === undefined ? {} : { minQuietMs: options.minQuietMs }),
    containers,
  });

  const policy: OperatorPolicy = { floor: isolation, allowedPaths: [...(options.allowedPaths ?? [])], networkAllowed };
  const startRefusals = new Map<string, StartRefusal>();
  const runtime: RuntimeContext = { pool, dataDir, isolation, bwrapPath, policy, onStopAsked: options.onStopAsked, startRefusals };
  const secret = options.secret ?? newSecret();
  const requests = routeRequests(new Router(RUNTIME_ROUTES), (req, res, url, params): RuntimeRequest => ({ req, res, url, params, runtime }), {
    secret,
  });
  const { server, port, url } = await listen(requests, { port: options.port ?? 0, host: options.host ?? "127.0.0.1" });
  // The one upgrade the runtime serves: a WebSocket handshake the Worker's outbound handler let through (egress/worker-carrier.ts).
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!carriesSecret(req, secret) || !WORKER_SEND_PATH.test(new URL(req.url ?? "/", "http://runtime").pathname)) return void socket.destroy();
    void carryWorkerUpgrade(req, socket, head, pool.containerSettings.egress.testHosts);
  });
  const engine = await startEngine(pool, policy, dataDir, startRefusals);

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    dataDir,
    isolation,
    pool,
    secret,
    engine,
    close() {
      closing ??= (async () => {
        await engine.close();
        // Containers first, so monitors waiting on /exit learn that they stopped; then the server.
        await pool.stopAll();
        await new Promise((resolve) => setTimeout(resolve, 50));
        server.close();
        server.closeAllConnections();
        unlock();
      })();
      return closing;
    },
  };
}
