/**
 * One process record through its life: starting → running (pipes wired into the output log, the
 * timeout armed) → exit (pipes drained, exit hooks awaited) → a terminal status, logged last.
 * Nothing here blocks on readers: output goes into the log, readers pull from it.
 */
import type { ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";
import type { OutputStream, ProcessInfo, ProcessStatus } from "../../protocol/process.ts";
import { isTerminalStatus } from "../../protocol/process.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { ServerLimits } from "../config.ts";
import { OutputCapture } from "./capture.ts";
import { OutputCoalescer } from "./coalescer.ts";
import { ExecReaders } from "./exec-readers.ts";
import { describeExit, type ProcessExit } from "./exit.ts";
import type { ExitHook } from "./hooks.ts";
import { processesTaggedExactly } from "../../server-kit/tagged-processes.ts";
import { isTerminatingSignal, signalGroup, terminateTree } from "./kill.ts";
import type { CommandSpec } from "./options.ts";
import { OutputLog } from "./output-log.ts";

type StdinState = "none" | "open" | "closed";

export class ManagedProcess {
  readonly id: string;
  /** This launch's run tag (RUN_TAG_VAR): the command and all it starts carry it. */
  readonly tag: string;
  /** What was asked for, minus the stdin bytes (handed to the pipe, then let go). */
  readonly spec: CommandSpec;
  readonly log: OutputLog;
  /** An exec's stream readers (and the wait for one that went away); undefined for background processes. */
  readonly execReaders: ExecReaders | undefined;
  readonly startTime = new Date();
  /** Resolves once the terminal status is logged (never rejects). */
  readonly finished: Promise<void>;

  status: ProcessStatus = "starting";
  pid: number | undefined;
  cwd: string | undefined;
  endTime: Date | undefined;
  exit: ProcessExit | undefined;
  error: string | undefined;

  readonly #limits: ServerLimits;
  #capture: OutputCapture | undefined;
  #stdinBytes: Buffer | undefined;
  #coalescer: OutputCoalescer | undefined;
  #stdin: Writable | undefined;
  #stdinState: StdinState = "none";
  #killSignal: string | undefined;
  #timedOut = false;
  #timeoutTimer: NodeJS.Timeout | undefined;
  #cancelEscalation: (() => void) | undefined;
  #spawnedAt = 0;
  #resolveFinished!: () => void;

  constructor(id: string, spec: CommandSpec, limits: ServerLimits, tag: string) {
    this.id = id;
    this.tag = tag;
    // A finished record may be kept for a while: it must not hold on to megabytes of stdin.
    this.spec = spec.stdin === undefined ? spec : { ...spec, stdin: undefined };
    this.#stdinBytes = spec.stdin;
    this.#limits = limits;
    this.log = new OutputLog(spec.logRetentionBytes);
    this.execReaders = spec.kind === "exec" ? new ExecReaders(this.log, limits.execReattachGraceMs) : undefined;
    this.#capture = spec.captureBytes === undefined ? undefined : new OutputCapture(this.log, spec.captureBytes);
    this.finished = new Promise((resolve) => (this.#resolveFinished = resolve));
  }

  /** Buffered exec only: the capped result output, until the result has been sent (releaseCapture). */
  get capture(): OutputCapture | undefined {
    return this.#capture;
  }

  /** What the buffered result holds while the record is kept for a retry (others let it go once sent). */
  get capturedBytes(): number {
    return this.attachable ? (this.#capture?.bytesHeld ?? 0) : 0;
  }

  /**
   * Whether a retry may attach to this run (it was named by an idempotency key or the caller's
   * process id): its buffered result is then kept as long as the record, not released once sent.
   */
  get attachable(): boolean {
    return this.spec.idempotencyKey !== undefined || this.spec.processId !== undefined;
  }

  /** The buffered result is out: let its output go (the record may be kept a while for readers). */
  releaseCapture(): void {
    this.#capture?.release();
    this.#capture = undefined;
  }

  get isLive(): boolean {
    return !isTerminalStatus(this.status);
  }

  get stdinState(): StdinState {
    return this.#stdinState;
  }

  /** Milliseconds from spawn to exit (or until now). */
  get durationMs(): number {
    if (this.#spawnedAt === 0) return 0;
    return (this.endTime?.getTime() ?? Date.now()) - this.#spawnedAt;
  }

  /** The child started: log `running`, feed its pipes into the log, arm the timeout (the call's, else its session's). */
  attach(child: ChildProcess, cwd: string, onExit: ExitHook[], timeoutMs: number | undefined = this.spec.timeoutMs): void {
    this.pid = child.pid;
    this.cwd = cwd;
    this.#spawnedAt = Date.now();
    this.status = "running";
    this.log.appendStatus({ status: "running", ...(this.pid === undefined ? {} : { pid: this.pid }) });

    const coalescer = new OutputCoalescer((stream, data) => this.log.appendOutput(stream, data), {
      maxBytes: this.#limits.chunkMaxBytes,
      maxDelayMs: this.#limits.chunkMaxDelayMs,
      holdUtf8: this.spec.encoding === "utf8",
    });
    this.#coalescer = coalescer;
    const pipes: [OutputStream, NodeJS.ReadableStream | null][] = [["stdout", child.stdout], ["stderr", child.stderr]];
    for (const [stream, pipe] of pipes) {
      pipe?.on("data", (chunk: Buffer) => coalescer.write(stream, chunk));
      pipe?.on("error", () => {}); // a broken pipe ends in 'close' like any other
    }
    // A pinned reader (execute/stream) fell behind: stop reading, the child blocks on its pipe.
    this.log.onPressure = (over) => {
      for (const [, pipe] of pipes) {
        if (over) pipe?.pause();
        else pipe?.resume();
      }
    };

    this.#wireStdin(child);
    child.on("error", (error) => this.log.closed || this.log.appendError(error.message, "INTERNAL_ERROR"));
    // 'close' (not 'exit'): both pipes have ended, so every byte is in the log before the final status.
    child.once("close", (code, signal) => {
      coalescer.end();
      void this.#finish(code, signal, onExit);
    });

    if (timeoutMs !== undefined) {
      this.#timeoutTimer = setTimeout(() => {
        this.#timedOut = true;
        this.#signal("SIGTERM");
      }, timeoutMs);
    }
  }

  /** The process never started: status `error`, logged as the only (terminal) event. */
  failToStart(message: string): void {
    this.status = "error";
    this.error = message;
    this.endTime = new Date();
    this.log.appendStatus({ status: "error", error: message });
    this.log.close();
    this.#resolveFinished();
  }

  /**
   * Signals the whole group. A terminating signal (SIGTERM, SIGINT, …) also reaches what the command
   * started outside its group (by its tag), and is followed by SIGKILL after the grace period; others
   * (SIGUSR1, SIGSTOP, …) are just delivered to the group. False when not running.
   */
  kill(signal: NodeJS.Signals): boolean {
    if (!this.isLive || this.pid === undefined) return false;
    if (isTerminatingSignal(signal)) this.#signal(signal);
    else signalGroup(this.pid, signal);
    return true;
  }

  /** Emits output still waiting in the coalescer (a reader wants everything written so far). */
  flushOutput(): void {
    this.#coalescer?.flush();
  }

  /** Writes to a background process's stdin; resolves once the bytes are handed to the pipe. */
  writeStdin(data: Buffer, close: boolean): Promise<number> {
    if (!this.isLive) throw new ServiceError("PROCESS_NOT_RUNNING", `process ${this.id} is ${this.status}`, { status: this.status });
    const stdin = this.#stdin;
    if (this.#stdinState !== "open" || !stdin || stdin.writableEnded || stdin.destroyed) {
      throw new ServiceError("STDIN_CLOSED", `stdin of process ${this.id} is closed`);
    }
    if (close) this.#stdinState = "closed";
    return new Promise((resolve, reject) => {
      const done = (error?: Error | null) => {
        if (!error) resolve(data.length);
        else reject(new ServiceError("STDIN_CLOSED", `stdin of process ${this.id} is closed: ${error.message}`));
      };
      if (data.length === 0) {
        if (close) stdin.end(() => resolve(0));
        else resolve(0);
        return;
      }
      stdin.write(data, done);
      if (close) stdin.end();
    });
  }

  info(): ProcessInfo {
    const exit = this.exit;
    const info: ProcessInfo = {
      id: this.id,
      ...(this.pid === undefined ? {} : { pid: this.pid }),
      command: this.spec.command,
      ...(this.spec.args === undefined ? {} : { args: this.spec.args }),
      status: this.status,
      startTime: this.startTime.toISOString(),
      ...(this.endTime ? { endTime: this.endTime.toISOString() } : {}),
      ...(exit ? { exitCode: exit.exitCode } : {}),
      ...(exit?.signal === undefined ? {} : { signal: exit.signal }),
      ...(exit ? { timedOut: exit.timedOut, killed: exit.killed } : {}),
      ...(this.spec.sessionId === undefined ? {} : { sessionId: this.spec.sessionId }),
      ...(this.cwd === undefined ? {} : { cwd: this.cwd }),
      ...(this.error === undefined ? {} : { error: this.error }),
      stdoutBytes: this.log.streamBytes("stdout"),
      stderrBytes: this.log.streamBytes("stderr"),
      lastSeq: this.log.lastSeq,
    };
    return info;
  }

  #signal(signal: NodeJS.Signals): void {
    if (this.pid === undefined) return;
    // Output of a command being killed is not worth holding it up for a reader that went away.
    this.execReaders?.stopWaiting();
    this.#killSignal ??= signal;
    this.#cancelEscalation?.();
    this.#cancelEscalation = terminateTree(this.pid, () => processesTaggedExactly(this.tag), signal, this.#limits.killGraceMs);
  }

  #wireStdin(child: ChildProcess): void {
    const stdin = child.stdin;
    if (!stdin) return;
    this.#stdin = stdin;
    this.#stdinState = "open";
    stdin.on("error", () => (this.#stdinState = "closed")); // EPIPE: the child closed its end
    stdin.on("close", () => (this.#stdinState = "closed"));
    const bytes = this.#stdinBytes;
    this.#stdinBytes = undefined;
    if (this.spec.keepStdinOpen) {
      if (bytes && bytes.length > 0) stdin.write(bytes);
      return;
    }
    this.#stdinState = "closed";
    if (bytes && bytes.length > 0) stdin.end(bytes);
    else stdin.end();
  }

  async #finish(code: number | null, signal: NodeJS.Signals | null, onExit: ExitHook[]): Promise<void> {
    clearTimeout(this.#timeoutTimer);
    // The escalation timer stays armed: group members that outlived the leader still get SIGKILL.
    this.endTime = new Date();
    this.#stdinState = "closed";
    const exit = describeExit({ code, signal, timedOut: this.#timedOut, killSignal: this.#killSignal });
    this.exit = exit;
    const snapshot = { ...this.info(), status: exit.status };
    for (const hook of onExit) {
      try {
        await hook(snapshot);
      } catch (error) {
        this.log.appendError(`exit hook failed: ${(error as Error).message}`, "INTERNAL_ERROR");
      }
    }
    // The pipes are gone: drop what referenced them (a finished record may be kept a while).
    this.log.onPressure = undefined;
    this.#coalescer = undefined;
    this.#stdin = undefined;
    this.status = exit.status;
    this.log.appendStatus({
      status: exit.status,
      exitCode: exit.exitCode,
      timedOut: exit.timedOut,
      ...(exit.signal === undefined ? {} : { signal: exit.signal }),
      ...(this.pid === undefined ? {} : { pid: this.pid }),
    });
    this.log.close();
    this.#resolveFinished();
  }
}
