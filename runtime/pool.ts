/**
 * The runtime's containers, one per sandbox key: started on demand (concurrent starts of one key
 * join), stopped by signal or destroy, and remembered after exit so a monitor can learn how a run ended.
 * At most `maxContainers` run (or start) at once: a start of one more key is TOO_MANY_SANDBOXES.
 *
 * With `warmServers` > 0 (and a launcher that can start servers before their sandbox is known), the
 * pool also keeps that many booted servers that belong to no sandbox yet, each in its own folder
 * `.warm-<run id>` with its own run tag. A start takes one, if one is alive, and hands it its sandbox;
 * it then belongs to that sandbox until it exits and is never handed out again. Each one taken is
 * replaced in the background, a warm container booting with the least share of the CPU
 * (WARM_CPU_WEIGHT) until taken, a warm server outside containers with its session's least share
 * (warm-share.ts). They do not count as sandboxes.
 */
import { REHEARSE_VAR, type RuntimeContainerInfo, type RuntimeStartRequest } from "../protocol/runtime.ts";
import { ServiceError } from "../server-kit/service-error.ts";
import { ContainerProcess } from "./container-process.ts";
import type { RuntimeIsolation } from "./isolation.ts";
import type { Launcher } from "./launch.ts";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { makeFolder, PASS_THROUGH_MODE } from "./folders.ts";
import { randomUUID } from "node:crypto";
import { spawnUnassigned } from "./container-process.ts";
import type { IsolationOptions } from "../protocol/isolation.ts";
import { resolveIsolationOptions } from "../server-kit/isolation-config.ts";
import { resolveIsolation } from "./isolation.ts";
import { containerSettings } from "./container/settings.ts";
import { MIN_QUIET_MS } from "./idle.ts";
import { RoomAtCap } from "./room-at-cap.ts";
import { fitsWarm, spawnContainer, type ContainerRun, type ContainerSettings } from "./container/sandbox-container.ts";
import type { ServerChild } from "./server-child.ts";
import { leastShare, ordinaryShare, warmShareAdjustable } from "./warm-share.ts";

export interface PoolOptions {
  dataDir: string;
  launcher: Launcher;
  isolation: RuntimeIsolation;
  startTimeoutMs?: number;
  stopGraceMs?: number;
  /** Live containers at most. */
  maxContainers?: number;
  /** Booted servers kept ready for the next starts (SANDBOX_WARM_POOL); default 0, none. */
  warmServers?: number;
  /** Every start begins with an empty workspace, as a Cloudflare container does (SANDBOX_EPHEMERAL_WORKSPACES). */
  ephemeralWorkspaces?: boolean;
  /** How sandboxes confined with bwrap get containers of their own (default: made from `isolation` and `dataDir`). */
  containers?: ContainerSettings;
  /** How long a sandbox must have been quiet before it may sleep to make room at the cap (default idle.ts MIN_QUIET_MS). */
  minQuietMs?: number;
}

/**
 * A warm container's share of contended CPU until it is taken (cpu.weight's least; a sandbox's is
 * 100 by default): its boot, and the code interpreters it readies once quiet, take only what the
 * sandboxes running leave, so a refill never slows a new sandbox's first command on a small machine.
 */
export const WARM_CPU_WEIGHT = 1;

/** A warm server rehearses a sandbox's first requests while it waits (container/boot/rehearsal.ts). */
const WARM_SERVER_ENV: Readonly<Record<string, string>> = { [REHEARSE_VAR]: "1" };

/** Each container is a Node server (~50 MB) plus its commands: a laptop runs a few dozen at most. */
const DEFAULT_MAX_CONTAINERS = 32;

export class ContainerPool {
  readonly #options: Required<PoolOptions>;
  /** Containers warm members are, when the runtime confines every sandbox (its mode is bwrap). */
  readonly #warmContainers: IsolationOptions | undefined;
  readonly #running = new Map<string, ContainerProcess>();
  readonly #starting = new Map<string, Promise<ContainerProcess>>();
  /** The last run of each key, kept after it exited. */
  readonly #lastRun = new Map<string, ContainerProcess>();
  /** Warm servers (in their containers, where sandboxes are containers), oldest first: booted or booting, assigned to no sandbox yet. */
  readonly #warm: ContainerRun[] = [];
  /** Who sleeps to make room at the cap. */
  readonly #room: RoomAtCap;
  /** Whether warm servers outside containers wait with the least share of the CPU (warm-share.ts). */
  readonly #plainShareAdjustable = warmShareAdjustable();
  /** Whether a refill is under way. */
  #refilling = false;
  /** The refill under way, if one is: stopping waits for it (a warm container it is making is ended with its disk). */
  #refillRun: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: PoolOptions) {
    this.#options = {
      startTimeoutMs: 15_000,
      stopGraceMs: 3_000,
      maxContainers: DEFAULT_MAX_CONTAINERS,
      warmServers: 0,
      ephemeralWorkspaces: false,
      minQuietMs: MIN_QUIET_MS,
      containers: defaultContainerSettings(options.isolation, options.dataDir),
      ...options,
    };
    this.#warmContainers = warmContainerOptions(options.isolation);
    this.#room = new RoomAtCap(this.#options.minQuietMs);
    if (this.#options.containers.users.switching) {
      // Containers' users pass through (never list) the data folder to their own folder, which only they may enter.
      makeFolder(options.dataDir, PASS_THROUGH_MODE);
      chmodSync(options.dataDir, PASS_THROUGH_MODE);
    }
    this.#refill();
  }

  /** How many warm servers the pool keeps. */
  get warmPoolSize(): number {
    return this.#options.warmServers;
  }

  /** Warm servers alive and waiting for a sandbox, booted or still booting. */
  get warmCount(): number {
    return this.#warm.filter((run) => run.server.running).length;
  }

  /** Warm servers that have booted and wait for a sandbox. */
  get warmBootedCount(): number {
    return this.#warm.filter((run) => run.server.hasBooted).length;
  }

  /** The run ids of the warm servers waiting now (each is a sandbox's run id once taken). */
  get warmRunIds(): string[] {
    return this.#warm.filter((run) => run.server.running).map((run) => run.server.runId);
  }

  /** Takes the oldest live warm server out of the pool for good, and has it replaced. */
  #takeWarm(): ContainerRun | undefined {
    let taken: ContainerRun | undefined;
    while (taken === undefined && this.#warm.length > 0) {
      const run = this.#warm.shift()!;
      if (run.server.running) taken = run;
    }
    this.#refill();
    return taken;
  }

  /** A warm server outside any container, given an ordinary share of the CPU as it becomes a sandbox's. */
  #takePlainWarm(): ServerChild | undefined {
    const server = this.#takeWarm()?.server;
    if (server && this.#plainShareAdjustable) ordinaryShare(server.child.pid);
    return server;
  }

  /**
   * Spawns warm servers until the pool holds its size again, in the background and gently: one at a
   * time, each once the last has booted, and none while a sandbox is starting (a boot takes a core
   * for a while, and the sandboxes starting now would wait for it). Failures are logged and dropped.
   */
  #refill(): void {
    if (this.#refilling || this.#closed || this.warmCount >= this.#options.warmServers) return;
    this.#refilling = true;
    this.#refillRun = (async () => {
      try {
        while (!this.#closed && this.warmCount < this.#options.warmServers) {
          while (this.#starting.size > 0 && !this.#closed) await new Promise((resolve) => setTimeout(resolve, 10));
          if (this.#closed) break;
          const run = await this.#spawnWarm();
          if (!run) break;
          await run.server.booted;
        }
      } catch (error) {
        console.error(`runtime: could not start a warm container server (${(error as Error).message})`);
      } finally {
        this.#refilling = false;
      }
    })();
  }

  async #spawnWarm(): Promise<ContainerRun | undefined> {
    const name = `.warm-${randomUUID()}`;
    const dir = join(this.#options.dataDir, name);
    mkdirSync(dir, { recursive: true, mode: 0o700 }); // opened to its container's user when one is made in it
    const containers = this.#options.containers;
    // A warm container boots on a disk of its own, made now rather than when a sandbox waits for it.
    const run = this.#warmContainers
      ? await spawnContainer(containers, dir, this.#warmContainers, undefined, await containers.disks.open(dir, name), WARM_CPU_WEIGHT, WARM_SERVER_ENV)
      : await spawnUnassigned(this.#options.launcher, dir, WARM_SERVER_ENV).then((server) => (server ? { server, user: undefined } : undefined));
    // Outside a container, its session's share stands in for the container's weight (warm-share.ts).
    if (run && !this.#warmContainers && this.#plainShareAdjustable) leastShare(run.server.child.pid);
    if (!run) return undefined;
    const server = run.server;
    if (this.#closed) {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
    this.#warm.push(run);
    // One that dies unassigned leaves the pool (and its folder); the next start has it replaced.
    void server.exited.then(() => {
      const index = this.#warm.indexOf(run);
      if (index >= 0) {
        this.#warm.splice(index, 1);
        rmSync(dir, { recursive: true, force: true });
      }
    });
    return run;
  }

  /** How this pool's containers are made and bounded. */
  get containerSettings(): ContainerSettings {
    return this.#options.containers;
  }

  get size(): number {
    return this.#running.size;
  }

  get maxContainers(): number {
    return this.#options.maxContainers;
  }

  /**
   * Starts the key's container unless it runs already (then the running one is returned as is).
   * `secret`: what its server answers to, where the caller chose it (default: a fresh one).
   */
  async start(key: string, request: RuntimeStartRequest, secret?: string): Promise<ContainerProcess> {
    const current = this.#running.get(key);
    if (current?.running && !current.stopping) return current;
    const pending = this.#starting.get(key);
    if (pending) return pending;
    const live = new Set([...this.#running.keys(), ...this.#starting.keys()]);
    live.delete(key); // a key on its way out is replaced, not added
    if (live.size >= this.#options.maxContainers) {
      // At the cap, an idle sandbox sleeps to make room, one of this start's own (room-at-cap.ts);
      // only when every one is busy or taken by another start is this refused.
      const sleeper = await this.#room.reserve(() => [...this.#running.values()], key);
      if (!sleeper) {
        throw new ServiceError("TOO_MANY_SANDBOXES", `this runtime runs ${live.size} sandboxes, its limit (SANDBOX_MAX_SANDBOXES), and all are busy: destroy one first`, {
          limit: this.#options.maxContainers,
        });
      }
      try {
        sleeper.signal(15);
        await sleeper.exited;
      } finally {
        this.#room.release(sleeper);
      }
      return this.start(key, request, secret);
    }
    // A container on its way out (sleep, destroy) finishes going before the next one starts.
    const starting = (current?.stopping ? current.exited : Promise.resolve()).then(() =>
      ContainerProcess.start({
        ...this.#options,
        key,
        request,
        ...(secret === undefined ? {} : { secret }),
        // A warm server is of one kind: a plain one for plain sandboxes, a container for containers.
        takeWarm: () => (this.#warmContainers ? undefined : this.#takePlainWarm()),
        takeWarmContainer: () => (this.#warmContainers ? this.#takeWarm() : undefined),
      }),
    );
    this.#starting.set(key, starting);
    try {
      const container = await starting;
      this.#running.set(key, container);
      this.#lastRun.set(key, container);
      void container.exited.then(() => {
        if (this.#running.get(key) === container) this.#running.delete(key);
      });
      return container;
    } finally {
      this.#starting.delete(key);
      this.#refill();
    }
  }

  info(key: string): RuntimeContainerInfo {
    return this.#lastRun.get(key)?.info() ?? { key, running: false };
  }

  /** Waits up to `waitMs` for the given run to exit; answers with its state either way. */
  async waitForExit(key: string, runId: string | undefined, waitMs: number): Promise<RuntimeContainerInfo> {
    const run = this.#lastRun.get(key);
    if (!run || (runId !== undefined && run.runId !== runId)) return { key, runId, running: false };
    if (run.running && waitMs > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([run.exited, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return run.info();
  }

  signal(key: string, signo: number): RuntimeContainerInfo {
    this.#running.get(key)?.signal(signo);
    return this.info(key);
  }

  async destroy(key: string): Promise<RuntimeContainerInfo> {
    const starting = this.#starting.get(key);
    if (starting) await starting.catch(() => undefined);
    await this.#running.get(key)?.kill();
    return this.info(key);
  }

  async stopAll(): Promise<void> {
    this.#closed = true;
    const warm = this.#warm.splice(0).map((run) => run.server);
    await Promise.all(warm.map((server) => server.kill()));
    for (const server of warm) rmSync(join(server.logPath, ".."), { recursive: true, force: true });
    await this.#refillRun;
    await Promise.allSettled([...this.#starting.values()]);
    await Promise.all([...this.#running.values()].map((container) => container.kill()));
    // The block of host uids goes back to the machine (as it would at the runtime's exit).
    await this.#options.containers.users.close();
  }
}

/** Containers of a runtime that has no settings of its own for them: found as its servers would. */
function defaultContainerSettings(isolation: RuntimeIsolation, dataDir: string): ContainerSettings {
  return containerSettings({ dataDir, bwrapPath: isolation.bwrapPath ?? (isolation.env ?? process.env).SANDBOX_BWRAP_PATH });
}

/** The options warm containers boot with (the runtime's defaults), when the runtime runs containers and they fit one. */
function warmContainerOptions(isolation: RuntimeIsolation): IsolationOptions | undefined {
  if (isolation.mode !== "bwrap") return undefined;
  try {
    const options = resolveIsolationOptions({}, resolveIsolation(isolation, {}, true).env);
    return fitsWarm(options) ? options : undefined;
  } catch {
    return undefined;
  }
}
