/**
 * One run of a cell through its life: accepted (its `start` is logged at once; it may wait for its
 * turn) → running (output coalesced into the log, results and the error logged as they come) → over
 * (`complete` logged last, with how it ended). Its events live in an output log like a process's,
 * so they stream and resume the same way; a buffered caller gets the Execution they add up to.
 *
 * How a run ended is decided here: whether it was interrupted or timed out, whether its
 * interpreter had to be restarted, how long it ran.
 */
import { executionError, type CodeEvent, type CodeLanguage, type Execution, type ExecutionOutcome, type RaisedError, type Result } from "../../protocol/code.ts";
import { ExecutionBuilder, type ExecutionLimits } from "../../protocol/code-execution.ts";
import type { OutputStream } from "../../protocol/process.ts";
import type { ServerLimits } from "../config.ts";
import { OutputCoalescer } from "../engine/coalescer.ts";
import { OutputLog } from "../engine/output-log.ts";

export interface ExecutionSpec {
  code: string;
  timeoutMs: number | undefined;
  /** Buffered runs: build the Execution, within these limits (undefined: streamed, nothing kept). */
  capture: ExecutionLimits | undefined;
  interruptOnDisconnect: boolean;
  /** Variables for this run only. */
  env: Record<string, string> | undefined;
}

export type ExecutionStatus = "queued" | "running" | "over";

/** Errors the server reports for a cell (the others come from the interpreter). */
export const SERVER_ERRORS = {
  interruptedBeforeStart: (): RaisedError => ({ name: "Interrupted", value: "The run was interrupted before it started", traceback: [] }),
  wouldNotStop: (graceMs: number): RaisedError => ({
    name: "ContextRestarted",
    value: `The cell did not stop within ${graceMs} ms of its interrupt: its interpreter was killed and restarted, and the context's state is gone`,
    traceback: [],
  }),
  interpreterDied: (language: CodeLanguage, how: string, said: string): RaisedError => ({
    name: "ContextRestarted",
    value: `The ${language} interpreter ${how} during the cell: it was restarted, and the context's state is gone`,
    traceback: said ? said.trimEnd().split("\n").slice(-20) : [],
  }),
  restarted: (): RaisedError => ({ name: "ContextRestarted", value: "The context was restarted", traceback: [] }),
  deleted: (): RaisedError => ({ name: "ContextDeleted", value: "The context was deleted", traceback: [] }),
  unavailable: (message: string): RaisedError => ({ name: "ContextUnavailable", value: message, traceback: [] }),
};

export class CodeExecution {
  readonly id: string;
  readonly contextId: string;
  readonly language: CodeLanguage;
  readonly spec: ExecutionSpec;
  readonly log: OutputLog;
  /** Resolves once `complete` is logged (never rejects). */
  readonly finished: Promise<void>;
  status: ExecutionStatus = "queued";

  readonly #limits: ServerLimits;
  #builder: ExecutionBuilder | undefined;
  #coalescer: OutputCoalescer | undefined;
  #executionCount = 0;
  #startedAt = 0;
  #hasError = false;
  #interrupted = false;
  #timedOut = false;
  #contextRestarted = false;
  #resolveFinished!: () => void;

  constructor(id: string, context: { id: string; language: CodeLanguage }, spec: ExecutionSpec, limits: ServerLimits) {
    this.id = id;
    this.contextId = context.id;
    this.language = context.language;
    this.spec = spec;
    this.#limits = limits;
    this.log = new OutputLog(limits.defaultLogRetentionBytes);
    this.#builder = spec.capture ? new ExecutionBuilder(spec.code, spec.capture) : undefined;
    this.finished = new Promise((resolve) => (this.#resolveFinished = resolve));
    this.#record({ type: "start", executionId: id, contextId: context.id, language: context.language });
  }

  get isOver(): boolean {
    return this.status === "over";
  }

  /** The Execution of a buffered run, once it is over. */
  execution(): Execution | undefined {
    return this.#builder?.result();
  }

  /** The buffered Execution is out: let it go (the run is kept a while for readers of its events). */
  releaseExecution(): void {
    this.#builder = undefined;
  }

  /** Its turn came: output from now on is this cell's. */
  begin(executionCount: number): void {
    this.status = "running";
    this.#executionCount = executionCount;
    this.#startedAt = Date.now();
    this.#coalescer = new OutputCoalescer((stream, data) => this.#output(stream, data), {
      maxBytes: this.#limits.chunkMaxBytes,
      maxDelayMs: this.#limits.chunkMaxDelayMs,
      holdUtf8: true,
    });
  }

  output(stream: OutputStream, data: Buffer): void {
    this.#coalescer?.write(stream, data);
  }

  /** Everything written so far goes out (a reader wants it now). */
  flushOutput(): void {
    this.#coalescer?.flush();
  }

  addResult(result: Result): void {
    this.#coalescer?.flush();
    this.#record({ type: "result", result });
  }

  addError(error: RaisedError): void {
    if (this.#hasError) return;
    this.#hasError = true;
    this.#coalescer?.flush();
    this.#record({ type: "error", error: executionError(error) });
  }

  markInterrupted(timedOut: boolean): void {
    this.#interrupted = true;
    if (timedOut) this.#timedOut = true;
  }

  markContextRestarted(): void {
    this.#contextRestarted = true;
  }

  /** The cell is over: its last output, then `complete`. */
  finish(): void {
    if (this.status === "over") return;
    this.#coalescer?.end();
    this.#coalescer = undefined;
    const outcome: ExecutionOutcome = {
      executionCount: this.#executionCount,
      duration: this.#startedAt === 0 ? 0 : Date.now() - this.#startedAt,
      ...(this.#interrupted ? { interrupted: true } : {}),
      ...(this.#timedOut ? { timedOut: true } : {}),
      ...(this.#contextRestarted ? { contextRestarted: true } : {}),
    };
    this.status = "over";
    this.#record({ type: "complete", ...outcome });
    this.log.onPressure = undefined;
    this.log.close();
    this.#resolveFinished();
  }

  #output(stream: OutputStream, data: Buffer): void {
    const entry = this.log.appendOutput(stream, data);
    this.#builder?.add({ type: stream, data: data.toString("utf8"), offset: entry.offset, timestamp: "" });
  }

  /** Logs an event (its fields as JSON, written as they are into every reader's stream). */
  #record(event: DistributiveOmit<Exclude<CodeEvent, { type: "stdout" | "stderr" | "truncated" }>, "timestamp" | "seq">): void {
    const { type, ...fields } = event;
    this.log.appendRecord(type, Buffer.from(JSON.stringify(fields), "utf8"));
    this.#builder?.add({ ...event, timestamp: "" } as CodeEvent);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
