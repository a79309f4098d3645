/**
 * One code context: an interpreter process, the runs waiting for it (one cell at a time, in the order
 * they came), and what happens when a cell will not end. An interrupt (a caller's, or a run's time
 * limit) goes to the driver; a cell still running a grace period later has its interpreter killed and
 * restarted, and says so. An interpreter that dies by itself is restarted too. Either way the state is
 * gone, the context (and its id) stays, and waiting runs go on in the fresh interpreter. An explicit
 * restart or a delete stops the running cell and the waiting ones.
 */
import type { CodeContext as CodeContextInfo, CodeLanguage, RaisedError } from "../../protocol/code.ts";
import { CODE_LIMITS } from "../../protocol/code.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { ServerLimits } from "../config.ts";
import type { CommandEnvironment } from "../engine/environment.ts";
import type { SpawnHooks } from "../engine/hooks.ts";
import type { DriverMessage } from "./channel.ts";
import { SERVER_ERRORS, type CodeExecution } from "./execution.ts";
import { InterpreterProcess, type InterpreterExit } from "./interpreter.ts";
import type { InterpreterPrograms } from "./languages.ts";

/** What every context of a server starts from. */
export interface ContextDeps {
  programs: InterpreterPrograms;
  workspace: string;
  environment: CommandEnvironment;
  hooks: SpawnHooks;
  limits: ServerLimits;
}

export interface ContextOptions {
  language: CodeLanguage;
  cwd: string | undefined;
  env: Record<string, string> | undefined;
  sessionId: string | undefined;
  isDefault: boolean;
}

export class CodeContext {
  readonly id: string;
  readonly language: CodeLanguage;
  readonly createdAt = new Date();
  readonly #options: ContextOptions;
  readonly #deps: ContextDeps;
  /** Where the first interpreter started. */
  #cwd = "";
  #interpreter: InterpreterProcess | undefined;
  /** Bumped per interpreter started: what an older one still sends goes nowhere. */
  #generation = 0;
  /** An interpreter is being (re)started. */
  #starting: Promise<void> | undefined;
  readonly #queue: CodeExecution[] = [];
  #running: CodeExecution | undefined;
  #runTimer: NodeJS.Timeout | undefined;
  #graceTimer: NodeJS.Timeout | undefined;
  #executionCount = 0;
  #closed = false;

  private constructor(id: string, options: ContextOptions, deps: ContextDeps) {
    this.id = id;
    this.language = options.language;
    this.#options = options;
    this.#deps = deps;
  }

  /** A context with its interpreter ready; throws (INTERPRETER_UNAVAILABLE, SPAWN_FAILED, …) when it cannot start. */
  static async create(id: string, options: ContextOptions, deps: ContextDeps): Promise<CodeContext> {
    const context = new CodeContext(id, options, deps);
    await context.#startInterpreter();
    return context;
  }

  info(): CodeContextInfo {
    return {
      id: this.id,
      language: this.language,
      cwd: this.#cwd,
      createdAt: this.createdAt.toISOString(),
      ...(this.#options.sessionId === undefined ? {} : { sessionId: this.#options.sessionId }),
      isDefault: this.#options.isDefault,
      executionCount: this.#executionCount,
    };
  }

  /** Queues a run; with `wait: false` a busy context refuses it (CODE_CONTEXT_BUSY). */
  submit(execution: CodeExecution, wait: boolean): void {
    if (this.#closed) throw new ServiceError("CODE_CONTEXT_NOT_FOUND", `code context ${this.id} not found`, { contextId: this.id });
    const busy = this.#running !== undefined || this.#queue.length > 0 || this.#starting !== undefined;
    if (busy && !wait) throw new ServiceError("CODE_CONTEXT_BUSY", `code context ${this.id} is running a cell`, { contextId: this.id });
    if (this.#queue.length >= CODE_LIMITS.maxQueuedRuns) {
      throw new ServiceError("CODE_CONTEXT_BUSY", `code context ${this.id} has ${this.#queue.length} runs waiting already`, { contextId: this.id });
    }
    this.#queue.push(execution);
    this.#pump();
  }

  /** Interrupts a run of this context: a waiting one ends at once, a running one gets an interrupt. False when it is over. */
  interrupt(execution: CodeExecution): boolean {
    if (execution.isOver) return false;
    const index = this.#queue.indexOf(execution);
    if (index !== -1) {
      this.#queue.splice(index, 1);
      execution.markInterrupted(false);
      execution.addError(SERVER_ERRORS.interruptedBeforeStart());
      execution.finish();
      return true;
    }
    if (this.#running === execution) this.#interruptRunning(false);
    return true;
  }

  /** A fresh interpreter under the same id; the running and waiting runs end. Resolves once it is ready. */
  async restart(): Promise<void> {
    if (this.#closed) throw new ServiceError("CODE_CONTEXT_NOT_FOUND", `code context ${this.id} not found`, { contextId: this.id });
    if (this.#starting) await this.#starting;
    this.#cancelAll(SERVER_ERRORS.restarted());
    this.#running?.markContextRestarted();
    await this.#replace("the context was restarted");
    if (!this.#interpreter) {
      throw new ServiceError("INTERPRETER_UNAVAILABLE", `code context ${this.id}: its ${this.language} interpreter could not be started again`, {
        contextId: this.id,
      });
    }
  }

  /** Ends the context: its runs stop, its interpreter is killed. Resolves with how many runs were stopped. */
  async close(): Promise<number> {
    if (this.#closed) return 0;
    this.#closed = true;
    const cancelled = this.#queue.length + (this.#running ? 1 : 0);
    this.#cancelAll(SERVER_ERRORS.deleted());
    const interpreter = this.#interpreter;
    this.#interpreter = undefined;
    await this.#starting;
    await interpreter?.kill("the context was deleted");
    this.#finishRunning();
    return cancelled;
  }

  async #startInterpreter(): Promise<void> {
    const generation = ++this.#generation;
    const interpreter: InterpreterProcess = await InterpreterProcess.start(
      {
        id: this.id,
        language: this.language,
        cwd: this.#options.cwd,
        env: this.#options.env,
        sessionId: this.#options.sessionId,
        programs: this.#deps.programs,
        workspace: this.#deps.workspace,
        environment: this.#deps.environment,
        hooks: this.#deps.hooks,
        startTimeoutMs: this.#deps.limits.codeStartTimeoutMs,
      },
      {
        output: (stream, data) => {
          if (generation === this.#generation) this.#running?.output(stream, data);
        },
        message: (message) => {
          if (generation === this.#generation) this.#onMessage(message);
        },
        exit: (exit) => {
          if (this.#interpreter === interpreter) this.#onUnexpectedExit(exit);
        },
      },
    );
    if (this.#closed) {
      await interpreter.kill("the context was deleted");
      return;
    }
    this.#interpreter = interpreter;
    this.#cwd ||= interpreter.cwd;
    this.#executionCount = 0;
  }

  /** Starts the next waiting run when nothing runs and the interpreter is there. */
  #pump(): void {
    if (this.#closed || this.#running || this.#starting || this.#queue.length === 0) return;
    const interpreter = this.#interpreter;
    if (!interpreter) {
      // The last start failed: try again for the runs that came since.
      void this.#replace("starting again");
      return;
    }
    const next = this.#queue.shift()!;
    this.#running = next;
    next.begin(++this.#executionCount);
    next.log.onPressure = (over) => interpreter.pause(over);
    if (next.spec.timeoutMs !== undefined) this.#runTimer = setTimeout(() => this.#interruptRunning(true), next.spec.timeoutMs);
    interpreter.send({ type: "run", id: next.id, code: next.spec.code, ...(next.spec.env ? { env: next.spec.env } : {}) });
  }

  #onMessage(message: DriverMessage): void {
    const running = this.#running;
    // Messages about another cell (e.g. display() from a thread after its cell ended) go nowhere.
    if (!running || message.type === "ready" || message.id !== running.id) return;
    if (message.type === "result") running.addResult(message.result);
    else if (message.type === "error") running.addError(message.error);
    else if (message.type === "done") {
      this.#finishRunning();
      this.#pump();
    }
  }

  #interruptRunning(timedOut: boolean): void {
    const running = this.#running;
    const interpreter = this.#interpreter;
    if (!running || !interpreter) return;
    running.markInterrupted(timedOut);
    interpreter.send({ type: "interrupt", id: running.id });
    this.#graceTimer ??= setTimeout(() => this.#killStuck(running), this.#deps.limits.codeInterruptGraceMs);
  }

  /** The cell did not stop after its interrupt: kill the interpreter, start another. */
  #killStuck(execution: CodeExecution): void {
    this.#graceTimer = undefined;
    if (this.#running !== execution) return;
    execution.addError(SERVER_ERRORS.wouldNotStop(this.#deps.limits.codeInterruptGraceMs));
    execution.markContextRestarted();
    void this.#replace("the cell would not stop");
  }

  #onUnexpectedExit(exit: InterpreterExit): void {
    this.#interpreter = undefined;
    const running = this.#running;
    if (running) {
      const how = exit.reason ?? (exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`);
      running.addError(SERVER_ERRORS.interpreterDied(this.language, how, exit.stderrTail));
      running.markContextRestarted();
    }
    if (!this.#closed) void this.#replace("it exited");
  }

  /**
   * Kills the interpreter (if there is one) and starts a fresh one; the running cell (its error set by
   * the caller) ends once the old interpreter is gone, so everything it wrote is in its log.
   */
  #replace(reason: string): Promise<void> {
    const old = this.#interpreter;
    this.#interpreter = undefined;
    const starting = (async () => {
      if (old) await old.kill(reason);
      this.#finishRunning();
      if (this.#closed) return;
      try {
        await this.#startInterpreter();
      } catch (error) {
        const waiting = this.#queue.splice(0);
        for (const execution of waiting) {
          execution.addError(SERVER_ERRORS.unavailable(`The ${this.language} interpreter could not be started again: ${(error as Error).message}`));
          execution.finish();
        }
      }
    })();
    this.#starting = starting;
    void starting.finally(() => {
      if (this.#starting === starting) this.#starting = undefined;
      this.#pump();
    });
    return starting;
  }

  /** Ends the waiting runs now and sets the running one's error (it ends once its interpreter is gone). */
  #cancelAll(error: RaisedError): void {
    for (const execution of this.#queue.splice(0)) {
      execution.addError(error);
      execution.finish();
    }
    this.#running?.addError(error);
  }

  #finishRunning(): void {
    clearTimeout(this.#runTimer);
    clearTimeout(this.#graceTimer);
    this.#runTimer = undefined;
    this.#graceTimer = undefined;
    const running = this.#running;
    if (!running) return;
    this.#running = undefined;
    this.#interpreter?.pause(false);
    running.finish();
  }
}
