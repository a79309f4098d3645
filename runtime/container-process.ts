/**
 * One local container: a container server process with its own port, workspace and home folder.
 * Starting resolves once the server listens; stopping takes every process the container started.
 * Each run has its own secret, written to the server's stdin: the server answers only to it.
 *
 * With a launcher that can start servers before their sandbox is known (launch.ts), every start hands
 * a booted server its sandbox on stdin: a warm one from the pool if it has one, else one spawned now.
 * Either way the server gets the same assignment, so a warm sandbox's walls are a cold one's.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseSignal } from "../protocol/process.ts";
import type { RuntimeContainerInfo, RuntimeStartRequest, ServerAssignment } from "../protocol/runtime.ts";
import { CONTAINER_SERVER_PORT, SECRET_FROM_STDIN_VAR } from "../protocol/runtime.ts";
import { newSecret } from "../server-kit/http/bearer.ts";
import { processesTagged } from "../server-kit/tagged-processes.ts";
import { resolveIsolation, type RuntimeIsolation } from "./isolation.ts";
import { serverEnv, type Launcher, type LaunchSpec } from "./launch.ts";
import { freePort, waitForListening } from "./ports.ts";
import { signalAll } from "./process-tree.ts";
import { ServerChild, type ExitInfo } from "./server-child.ts";
import { diskFullOf } from "./start-failure.ts";
import type { IsolationOptions } from "../protocol/isolation.ts";
import { resolveIsolationOptions } from "../server-kit/isolation-config.ts";
import { detectIsolation } from "../server-kit/detect-isolation.ts";
import {
  adoptWarm,
  containerServerEnv,
  containerWalls,
  connectContainer,
  fitsWarm,
  mayTakeWarm,
  spawnColdContainer,
  type ContainerRun,
  type ContainerSettings,
} from "./container/sandbox-container.ts";

export type { ExitInfo } from "./server-child.ts";

export interface ContainerOptions {
  key: string;
  dataDir: string;
  launcher: Launcher;
  /** The runtime's isolation defaults; the request's `isolation` overrides them. */
  isolation: RuntimeIsolation;
  request: RuntimeStartRequest;
  startTimeoutMs: number;
  /** After a stop signal, how long the server gets to shut down before everything is SIGKILLed. */
  stopGraceMs: number;
  /** A booted server waiting for its sandbox (the warm pool's), if one is at hand. */
  takeWarm?: () => ServerChild | undefined;
  /** Empty the workspace before each start, as a Cloudflare container's disk is (durable workspaces restore it). */
  ephemeralWorkspaces?: boolean;
  /** How sandboxes confined with bwrap get their containers. */
  containers?: ContainerSettings;
  /** A warm container (booted with the runtime's defaults), if one is at hand. */
  takeWarmContainer?: () => ContainerRun | undefined;
  /** What the server answers to, where the caller chose it (the Docker engine's caller does); default: a fresh one. */
  secret?: string;
}

/** Starts a server that boots in `dir` and waits for its assignment; undefined if the launcher cannot. */
export async function spawnUnassigned(launcher: Launcher, dir: string, env: Record<string, string> = {}): Promise<ServerChild | undefined> {
  if (!launcher.unassigned) return undefined;
  return new ServerChild(await launcher.unassigned(dir), dir, env, { bootedPipe: true });
}

export class ContainerProcess {
  readonly key: string;
  readonly port: number;
  readonly startedAt = new Date().toISOString();
  readonly #server: ServerChild;
  /** What the container server answers to (handed over on its stdin, never in env or argv). */
  readonly secret: string;
  readonly #stopGraceMs: number;
  #stopping = false;
  /** Its network was attached to the egress proxy (the only way out of its namespace). */
  #egressProxy = false;

  private constructor(options: ContainerOptions, port: number, server: ServerChild) {
    this.key = options.key;
    this.secret = options.secret ?? newSecret();
    this.port = server.port ?? port;
    this.#stopGraceMs = options.stopGraceMs;
    this.#server = server;
  }

  /** Per-run tag: names this start in the runtime API and marks every process it starts. */
  get runId(): string {
    return this.#server.runId;
  }

  get exited(): Promise<ExitInfo> {
    return this.#server.exited;
  }

  /** Starts the server (or assigns a warm one) and resolves once it listens (one retry if its port was taken). */
  static async start(options: ContainerOptions): Promise<ContainerProcess> {
    for (let attempt = 1; ; attempt++) {
      let container: ContainerProcess;
      try {
        container = await ContainerProcess.#launch(options, await freePort());
      } catch (error) {
        throw diskFullOf(error, (error as { logTail?: string }).logTail) ?? error;
      }
      try {
        // A server that reports it listens is handed over at once; others (and one that stopped
        // reporting) are polled until their port answers.
        if (!(await container.#server.saysListening(options.startTimeoutMs))) {
          await waitForListening(container.port, { timeoutMs: options.startTimeoutMs, abandon: container.exited });
        }
        return container;
      } catch (error) {
        await container.kill();
        const tail = container.logTail();
        if (attempt < 2 && tail.includes("EADDRINUSE")) continue;
        const full = diskFullOf(error, tail);
        if (full) throw full;
        throw Object.assign(new Error(`container server for "${options.key}" ${(error as Error).message}`), {
          logTail: tail,
        });
      }
    }
  }

  static async #launch(options: ContainerOptions, port: number): Promise<ContainerProcess> {
    const sandboxDir = join(options.dataDir, options.key);
    const workspace = join(sandboxDir, "workspace");
    // The sandbox's folder is its owner's alone: whatever commands leave in it (a setuid file among
    // it) no other user of the machine can reach, even where the data directory is open to them.
    mkdirSync(sandboxDir, { recursive: true, mode: 0o700 });
    chmodSync(sandboxDir, 0o700);
    if (options.ephemeralWorkspaces) rmSync(workspace, { recursive: true, force: true });
    mkdirSync(workspace, { recursive: true });
    const enableInternet = options.request.enableInternet ?? true;
    const isolation = resolveIsolation(options.isolation, options.request.isolation, enableInternet);
    if (isolation.mode === "bwrap" && options.containers) return ContainerProcess.#launchContainer(options, options.containers, sandboxDir, isolation.env);
    const spec: LaunchSpec = {
      key: options.key,
      port,
      sandboxDir,
      workspace,
      env: options.request.env ?? {},
      enableInternet,
      isolation: isolation.mode,
      isolationEnv: isolation.env,
    };

    const warm = options.takeWarm?.();
    const unassigned = warm ?? (await spawnUnassigned(options.launcher, sandboxDir));
    if (unassigned) {
      if (warm) {
        const warmDir = join(warm.logPath, "..");
        warm.moveTo(sandboxDir);
        rmSync(warmDir, { recursive: true, force: true });
      }
      const container = new ContainerProcess(options, port, unassigned);
      const assignment: ServerAssignment = { secret: container.secret, env: serverEnv(spec) };
      unassigned.writeInput(JSON.stringify(assignment));
      return container;
    }
    // A launcher that wraps the server with the sandbox's settings: started for this sandbox alone.
    const server = new ServerChild(options.launcher.launch(spec), sandboxDir, { [SECRET_FROM_STDIN_VAR]: "1" });
    const container = new ContainerProcess(options, port, server);
    server.writeInput(`${container.secret}\n`);
    return container;
  }

  /**
   * The sandbox as a container of its own (bwrap): a warm one adopted where the sandbox asks for
   * nothing beyond the defaults, else one started for it. Its network is attached before it is handed over.
   */
  static async #launchContainer(options: ContainerOptions, settings: ContainerSettings, sandboxDir: string, isolationEnv: Record<string, string>): Promise<ContainerProcess> {
    let walls: IsolationOptions;
    try {
      walls = resolveIsolationOptions({}, isolationEnv);
    } catch (error) {
      throw Object.assign(new Error((error as Error).message), { logTail: `[INVALID_REQUEST] ${(error as Error).message}` });
    }
    // An ephemeral workspace starts empty: on a disk of its own, the disk goes, with all it held.
    if (options.ephemeralWorkspaces) settings.disks.discard(options.key, sandboxDir);
    let warm = fitsWarm(walls) && mayTakeWarm(settings, sandboxDir) ? options.takeWarmContainer?.() : undefined;
    // It booted and waited with the least share of the CPU: from now on it is a sandbox's, with a sandbox's.
    warm?.weigh?.(settings.limits.cpuWeight);
    // Its folders move only once its mounts are made: a server that says it booted runs inside them.
    if (warm) await Promise.race([warm.server.booted, warm.server.exited]);
    if (warm && !warm.server.running) warm = undefined;
    let run: ContainerRun;
    if (warm) {
      try {
        await adoptWarm(warm, sandboxDir, options.ephemeralWorkspaces ?? false);
      } catch (error) {
        await warm.server.kill(); // taken from the pool: nobody else would end it
        throw error;
      }
      run = warm;
    } else {
      if (options.ephemeralWorkspaces) rmSync(join(sandboxDir, "workspace"), { recursive: true, force: true });
      run = await spawnColdContainer(settings, sandboxDir, walls);
    }
    const container = new ContainerProcess(options, 0, run.server);
    try {
      const support = detectIsolation({ bwrapPath: settings.bwrap });
      await run.verify?.();
      let trustBundle: string | undefined;
      if (walls.allowNetwork) {
        await Promise.race([run.server.booted, run.server.exited]);
        trustBundle = await connectContainer(settings, run, options.key, sandboxDir);
        container.#egressProxy = true;
      }
      const env = containerServerEnv(options.key, options.request.env ?? {}, containerWalls(walls, run.user, support.bwrap.version, settings), trustBundle);
      const assignment: ServerAssignment = { secret: container.secret, env };
      run.server.writeInput(JSON.stringify(assignment));
    } catch (error) {
      await container.kill();
      throw error;
    }
    return container;
  }

  get running(): boolean {
    return this.#server.running;
  }

  /** Asked to stop (signalled or killed) and not yet gone: a new start must wait for it. */
  get stopping(): boolean {
    return this.#stopping && this.running;
  }

  info(): RuntimeContainerInfo {
    return {
      key: this.key,
      running: this.running,
      runId: this.runId,
      pid: this.#server.child.pid,
      ports: { [String(CONTAINER_SERVER_PORT)]: this.port },
      startedAt: this.startedAt,
      ...(this.#egressProxy ? { egressProxy: true } : {}),
      ...(this.#server.exit ?? {}),
    };
  }

  logTail(maxChars = 2000): string {
    return this.#server.logTail(maxChars);
  }

  /**
   * Sends a signal to the container server (what a container runtime sends to PID 1). For anything
   * but SIGKILL the server gets a grace period to stop its processes; then everything is killed.
   */
  signal(signo: number): void {
    const pid = this.#server.serverPid;
    if (!this.running || pid === undefined) return;
    const name = parseSignal(signo) ?? signo;
    if ([1, 2, 9, 15].includes(signo)) this.#stopping = true;
    if (signo === 9) {
      void this.kill();
      return;
    }
    try {
      process.kill(pid, name);
    } catch {
      return;
    }
    const timer = setTimeout(() => void this.kill(), this.#stopGraceMs);
    timer.unref();
    void this.exited.then(() => clearTimeout(timer));
  }

  /** SIGKILLs the server and every process of this container; resolves once the server is gone. */
  async kill(): Promise<ExitInfo> {
    this.#stopping = true;
    return this.#server.kill();
  }
}

/**
 * Ends the runs a previous runtime left (it was killed without a chance to stop them): their servers
 * and every process their commands started, found by the run's tag whether or not the server still
 * lives. How many runs had something left.
 */
export function reapLeftovers(pidFiles: string[]): number {
  let reaped = 0;
  for (const file of pidFiles) {
    try {
      const tag = readFileSync(file, "utf8").split("\n")[1];
      const stale = tag ? processesTagged(tag) : [];
      if (stale.length > 0) {
        signalAll(stale, "SIGKILL");
        reaped++;
      }
      rmSync(file, { force: true });
    } catch {
      // unreadable: leave it
    }
  }
  return reaped;
}
