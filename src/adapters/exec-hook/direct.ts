/**
 * The `direct` exec-hook sandbox, for development: each request runs as a child process on this
 * machine, with no sandbox around it. It needs Node (or a runtime with Node's child_process); the
 * module is looked up when a request runs, so importing this file is harmless in a Worker, where a
 * spawn fails with a TransportError.
 */
import { concatBytes } from "../../rpc/bytes.ts";
import { ExitError, TimeoutError, TransportError } from "./errors.ts";
import { prepareRequest, type PreparedRequest } from "./request.ts";
import type { ExecHookRequest, ExecHookResponse, ExecHookSandbox, ExecHookSpawnOptions } from "./types.ts";

export interface DirectExecHookConfig {
  /** Working directory of the processes (default: this process's). */
  cwd?: string;
  /** Time limit of requests that give none, in milliseconds (none when unset). */
  timeoutMs?: number;
}

/** Exit codes of death by signal, as shells report them (128 + n). */
const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

interface Child {
  pid?: number;
  stdin: { end(data?: Uint8Array): void; on(event: "error", listener: () => void): void } | null;
  stdout: { on(event: "data", listener: (chunk: Uint8Array) => void): void } | null;
  stderr: { on(event: "data", listener: (chunk: Uint8Array) => void): void } | null;
  kill(signal: string): boolean;
  once(event: "error", listener: (error: Error) => void): void;
  once(event: "close", listener: (code: number | null, signal: string | null) => void): void;
}
type SpawnChild = (
  command: string,
  args: string[],
  options: { cwd?: string; env: Record<string, string | undefined>; stdio: "pipe"; detached: boolean },
) => Child;

export class DirectExecHookSandbox implements ExecHookSandbox {
  readonly #config: DirectExecHookConfig;
  readonly #running = new Set<Child>();
  #closed = false;

  constructor(config: DirectExecHookConfig = {}) {
    this.#config = config;
  }

  name(): string {
    return "direct";
  }

  async spawn(request: ExecHookRequest, options: ExecHookSpawnOptions = {}): Promise<ExecHookResponse> {
    const prepared = prepareRequest(request, this.#config.timeoutMs);
    options.signal?.throwIfAborted();
    if (this.#closed) return { stdout: new Uint8Array(), stderr: new Uint8Array(), error: new TransportError("the sandbox is closed") };
    let spawnChild: SpawnChild;
    try {
      spawnChild = childProcessSpawn();
    } catch (error) {
      return { stdout: new Uint8Array(), stderr: new Uint8Array(), error: new TransportError(`direct mode needs Node's child_process: ${messageOf(error)}`, { cause: error }) };
    }
    return this.#run(spawnChild, prepared, options.signal);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const child of this.#running) killGroup(child);
  }

  #run(spawnChild: SpawnChild, request: PreparedRequest, signal: AbortSignal | undefined): Promise<ExecHookResponse> {
    return new Promise((resolve, reject) => {
      const stdout: Uint8Array[] = [];
      const stderr: Uint8Array[] = [];
      const done = (error?: ExitError | TimeoutError | TransportError) =>
        resolve({ stdout: concatBytes(stdout), stderr: concatBytes(stderr), ...(error === undefined ? {} : { error }) });
      let child: Child;
      try {
        // Its own process group, so a kill reaches whatever it started too (they hold the output pipes).
        const cwd = this.#config.cwd === undefined ? {} : { cwd: this.#config.cwd };
        child = spawnChild(request.command, request.args, { ...cwd, env: childEnv(request.env), stdio: "pipe", detached: true });
      } catch (error) {
        return done(new TransportError(messageOf(error), { cause: error }));
      }
      this.#running.add(child);
      let timedOut = false;
      const timer = request.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), killGroup(child)), request.timeoutMs);
      const onAbort = () => killGroup(child);
      signal?.addEventListener("abort", onAbort, { once: true });
      const finish = () => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.#running.delete(child);
      };
      child.stdout?.on("data", (chunk) => stdout.push(chunk));
      child.stderr?.on("data", (chunk) => stderr.push(chunk));
      // A process that exits without reading its stdin closes the pipe: not an error of the call.
      child.stdin?.on("error", () => undefined);
      child.stdin?.end(request.stdin);
      child.once("error", (error) => {
        finish();
        done(new TransportError(messageOf(error), { cause: error }));
      });
      child.once("close", (code, exitSignal) => {
        finish();
        if (signal?.aborted) return reject(signal.reason);
        if (timedOut) return done(new TimeoutError(request.timeoutMs ?? 0));
        if (exitSignal !== null) return done(new ExitError(128 + (SIGNAL_NUMBERS[exitSignal] ?? 0), exitSignal));
        if (code === 0) return done();
        done(new ExitError(code ?? 1));
      });
    });
  }
}

export function directExecHookSandbox(config: DirectExecHookConfig = {}): DirectExecHookSandbox {
  return new DirectExecHookSandbox(config);
}

function killGroup(child: Child): void {
  try {
    if (child.pid === undefined) throw new Error("no pid");
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

function childProcessSpawn(): SpawnChild {
  const module = process.getBuiltinModule("node:child_process");
  if (!module) throw new Error("node:child_process is not available here");
  return module.spawn as unknown as SpawnChild;
}

/** The request's env as given (PATH added from this process when it has none, to find programs); none given: this process's env. */
function childEnv(env: Record<string, string> | undefined): Record<string, string | undefined> {
  if (env === undefined) return { ...process.env };
  return "PATH" in env ? env : { PATH: process.env.PATH, ...env };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
