/**
 * EdgeProcessHandle: Mastra's ProcessHandle over a process in the sandbox. It follows the process
 * from the moment it exists, so `stdout`/`stderr` fill as output arrives and `exitCode` is set on
 * exit even when nobody waits. Mastra's base class adds the rest of the contract on top of these
 * primitives: retention limits, `wait({ onStdout, onStderr, abortSignal })`, and the Node streams
 * `reader` (stdout) and `writer` (stdin) for JSON-RPC or LSP connections.
 */
import { ProcessHandle, SandboxError as MastraSandboxError, type CommandResult, type SpawnProcessOptions } from "@mastra/core/workspace";
import { ProcessNotRunningError } from "../../client/index.ts";
import { isGone, type ExitFacts, type ProcessOutput } from "./process-output.ts";
import { succeeded } from "../../../protocol/process.ts";

/** What the handle does to the process: the sandbox calls behind kill and stdin. */
export interface ProcessControl {
  /** Sends SIGKILL. */
  kill(): Promise<void>;
  /** Undefined when the process has no stdin (started with `stdinMode: "ignore"`). */
  stdin?: {
    write(data: string): Promise<void>;
    close(): Promise<void>;
  };
}

export interface HandleSource {
  /** The process id in the sandbox: the handle's `pid`. */
  pid: string;
  command?: string;
  /** Epoch ms the process started (for `executionTimeMs`). */
  startedAt: number;
  /** Its output and exit, read until `signal` aborts. */
  output(signal: AbortSignal): AsyncIterable<ProcessOutput>;
  control: ProcessControl;
}

type HandleOptions = Pick<SpawnProcessOptions, "maxRetainedBytes" | "onStdout" | "onStderr" | "timeout">;

export class EdgeProcessHandle extends ProcessHandle {
  readonly pid: string;
  exitCode: number | undefined;
  readonly #control: ProcessControl;
  readonly #startedAt: number;
  readonly #timeout: number | undefined;
  readonly #following = new AbortController();
  readonly #exit: Promise<CommandResult>;
  #seq = 0;
  #seqWaiters: { seq: number; resolve: () => void }[] = [];

  constructor(source: HandleSource, options: HandleOptions = {}) {
    super(options);
    this.pid = source.pid;
    if (source.command !== undefined) this.command = source.command;
    this.#control = source.control;
    this.#startedAt = source.startedAt;
    this.#timeout = options.timeout;
    this.#exit = this.#follow(source);
    // Settled even when nobody waits: the outcome is kept for a later wait().
    this.#exit.catch(() => undefined);
  }

  /** The exit. (Mastra's base class wraps this: callbacks and abortSignal of `wait(options)` are its part.) */
  override async wait(_options?: Parameters<ProcessHandle["wait"]>[0]): Promise<CommandResult> {
    return this.#exit;
  }

  /** Kills the process (SIGKILL). False when it had already exited or is gone. */
  async kill(): Promise<boolean> {
    if (this.exitCode !== undefined) return false;
    try {
      await this.#control.kill();
    } catch (error) {
      if (isGone(error) || error instanceof ProcessNotRunningError) return false;
      throw error;
    }
    // It may have exited on its own just before the signal: the exit says which.
    if (this.#following.signal.aborted) return true;
    const result = await this.#exit.catch(() => undefined);
    return result?.killed === true;
  }

  async sendStdin(data: string): Promise<void> {
    const stdin = this.#openStdin();
    try {
      await stdin.write(data);
    } catch (error) {
      throw this.#stdinError(error);
    }
  }

  override async closeStdin(): Promise<void> {
    const stdin = this.#openStdin();
    try {
      await stdin.close();
    } catch (error) {
      throw this.#stdinError(error);
    }
  }

  /**
   * Stops following the process (it keeps running in the sandbox). A pending `wait()` rejects; the
   * sandbox's process manager finds the process again with `get(pid)`.
   */
  detach(): void {
    this.#following.abort(
      new MastraSandboxError(`Stopped following process ${this.pid}: the sandbox was stopped (get(pid) after start() follows it again)`, "DETACHED", {
        pid: this.pid,
      }),
    );
  }

  /** Resolves once output up to log position `seq` has been taken in (or the process ended). */
  caughtUp(seq: number): Promise<void> {
    if (this.#seq >= seq || this.exitCode !== undefined || this.#following.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.#seqWaiters.push({ seq, resolve }));
  }

  #openStdin(): NonNullable<ProcessControl["stdin"]> {
    if (this.exitCode !== undefined) throw new Error(`Process ${this.pid} has already exited with code ${this.exitCode}`);
    const stdin = this.#control.stdin;
    if (!stdin) throw new Error(`Process ${this.pid} has no stdin (it was started with stdinMode "ignore")`);
    return stdin;
  }

  #stdinError(error: unknown): unknown {
    if (error instanceof ProcessNotRunningError || isGone(error)) {
      return new Error(`Process ${this.pid} has already exited${this.exitCode === undefined ? "" : ` with code ${this.exitCode}`}`, { cause: error });
    }
    return error;
  }

  async #follow(source: HandleSource): Promise<CommandResult> {
    try {
      for await (const item of source.output(this.#following.signal)) {
        if (item.type === "exit") return this.#finish(item.exit);
        if (item.type === "stdout") this.emitStdout(item.data);
        else this.emitStderr(item.data);
        if (item.seq !== undefined) this.#advance(item.seq);
      }
      throw new MastraSandboxError(`The output of process ${this.pid} ended without an exit`, "CONNECTION_FAILED", { pid: this.pid });
    } finally {
      this.#advance(Number.POSITIVE_INFINITY);
    }
  }

  #advance(seq: number): void {
    this.#seq = seq;
    const due = this.#seqWaiters.filter((waiter) => waiter.seq <= seq);
    this.#seqWaiters = this.#seqWaiters.filter((waiter) => waiter.seq > seq);
    for (const waiter of due) waiter.resolve();
  }

  #finish(exit: ExitFacts): CommandResult {
    if (exit.timedOut && this.#timeout !== undefined) this.emitStderr(`\nProcess timed out after ${this.#timeout}ms`);
    this.exitCode = exit.exitCode;
    return {
      success: succeeded(exit),
      exitCode: exit.exitCode,
      stdout: this.stdout,
      stderr: this.stderr,
      executionTimeMs: Date.now() - this.#startedAt,
      timedOut: exit.timedOut,
      killed: exit.killed,
    };
  }
}
