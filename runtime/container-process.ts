/**
 * One local container: a container server process with its own port, workspace and home folder.
 * Starting resolves once the server listens; stopping takes every process the container started.
 * Each run has its own secret, written to the server's stdin: the server answers only to it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { parseSignal, signalNumber } from "../protocol/process.ts";
import type { RuntimeContainerInfo, RuntimeStartRequest } from "../protocol/runtime.ts";
import { CONTAINER_SERVER_PORT, RUN_TAG_VAR, SECRET_FROM_STDIN_VAR } from "../protocol/runtime.ts";
import { newSecret } from "../server-kit/http/bearer.ts";
import { resolveIsolation, type RuntimeIsolation } from "./isolation.ts";
import type { Launcher } from "./launch.ts";
import { freePort, waitForListening } from "./ports.ts";
import { descendantsOf, signalAll } from "./process-tree.ts";
import { processesTagged } from "../server-kit/tagged-processes.ts";

export interface ExitInfo {
  exitCode: number;
  signal?: string;
}

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
}

export class ContainerProcess {
  readonly key: string;
  readonly port: number;
  readonly startedAt = new Date().toISOString();
  readonly exited: Promise<ExitInfo>;
  readonly #child: ChildProcess;
  /** Per-run tag: names this start in the runtime API and marks every process it starts. */
  readonly runId = randomUUID();
  /** What the container server answers to (handed over on its stdin, never in env or argv). */
  readonly secret = newSecret();
  readonly #logPath: string;
  readonly #pidPath: string;
  readonly #stopGraceMs: number;
  #exit: ExitInfo | undefined;
  #stopping = false;

  private constructor(options: ContainerOptions, port: number) {
    this.key = options.key;
    this.port = port;
    this.#stopGraceMs = options.stopGraceMs;
    const sandboxDir = join(options.dataDir, options.key);
    const workspace = join(sandboxDir, "workspace");
    // The sandbox's folder is its owner's alone: whatever commands leave in it (a setuid file among
    // it) no other user of the machine can reach, even where the data directory is open to them.
    mkdirSync(sandboxDir, { recursive: true, mode: 0o700 });
    chmodSync(sandboxDir, 0o700);
    mkdirSync(workspace, { recursive: true });
    this.#logPath = join(sandboxDir, "container.log");
    this.#pidPath = join(sandboxDir, "container.pid");
    const enableInternet = options.request.enableInternet ?? true;
    const isolation = resolveIsolation(options.isolation, options.request.isolation, enableInternet);
    const launch = options.launcher.launch({
      key: options.key,
      port,
      sandboxDir,
      workspace,
      env: options.request.env ?? {},
      enableInternet,
      isolation: isolation.mode,
      isolationEnv: isolation.env,
    });
    const log = openSync(this.#logPath, "w");
    try {
      this.#child = spawn(launch.command, launch.args, {
        cwd: launch.cwd,
        env: { ...launch.env, [RUN_TAG_VAR]: this.runId, [SECRET_FROM_STDIN_VAR]: "1" },
        stdio: ["pipe", log, log],
        detached: true, // own process group: a Ctrl-C meant for the runtime does not reach it directly
      });
    } finally {
      closeSync(log);
    }
    this.#child.stdin?.on("error", () => {}); // a server that died at once: its exit says why
    this.#child.stdin?.end(`${this.secret}\n`);
    this.exited = new Promise((resolve) => {
      this.#child.once("exit", (code, signal) => {
        this.#exit = signal ? { exitCode: 128 + (signalNumber(signal) ?? 0), signal } : { exitCode: code ?? 0 };
        rmSync(this.#pidPath, { force: true });
        // Whatever the server left behind goes with it, as it would with a container.
        signalAll(processesTagged(this.runId), "SIGKILL");
        resolve(this.#exit);
      });
      this.#child.once("error", (error) => {
        this.#exit = { exitCode: 127 };
        writeFileSync(this.#logPath, `spawn failed: ${error.message}\n`, { flag: "a" });
        resolve(this.#exit);
      });
    });
    if (this.#child.pid !== undefined) writeFileSync(this.#pidPath, `${this.#child.pid}\n${this.runId}\n`);
  }

  /** Spawns the container server and resolves once it listens (one retry if its port was taken). */
  static async start(options: ContainerOptions): Promise<ContainerProcess> {
    for (let attempt = 1; ; attempt++) {
      const container = new ContainerProcess(options, await freePort());
      try {
        await waitForListening(container.port, { timeoutMs: options.startTimeoutMs, abandon: container.exited });
        return container;
      } catch (error) {
        await container.kill();
        const tail = container.logTail();
        if (attempt < 2 && tail.includes("EADDRINUSE")) continue;
        throw Object.assign(new Error(`container server for "${options.key}" ${(error as Error).message}`), {
          logTail: tail,
        });
      }
    }
  }

  get running(): boolean {
    return this.#exit === undefined;
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
      pid: this.#child.pid,
      ports: { [String(CONTAINER_SERVER_PORT)]: this.port },
      startedAt: this.startedAt,
      ...(this.#exit ?? {}),
    };
  }

  logTail(maxChars = 2000): string {
    try {
      return readFileSync(this.#logPath, "utf8").slice(-maxChars);
    } catch {
      return "";
    }
  }

  /**
   * Sends a signal to the container server (what a container runtime sends to PID 1). For anything
   * but SIGKILL the server gets a grace period to stop its processes; then everything is killed.
   */
  signal(signo: number): void {
    if (!this.running || this.#child.pid === undefined) return;
    const name = parseSignal(signo) ?? signo;
    if ([1, 2, 9, 15].includes(signo)) this.#stopping = true;
    if (signo === 9) {
      void this.kill();
      return;
    }
    try {
      process.kill(this.#child.pid, name);
    } catch {
      return;
    }
    const timer = setTimeout(() => void this.kill(), this.#stopGraceMs);
    timer.unref();
    void this.exited.then(() => clearTimeout(timer));
  }

  /** SIGKILLs the server and every process of this container; resolves once the server is gone. */
  async kill(): Promise<ExitInfo> {
    const pid = this.#child.pid;
    this.#stopping = true;
    if (this.running && pid !== undefined) {
      const tree = [pid, ...descendantsOf(pid), ...processesTagged(this.runId)];
      signalAll(tree, "SIGKILL");
    }
    return this.exited;
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
