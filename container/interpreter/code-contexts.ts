/**
 * The code contexts of one server: create, find, list, restart, delete; the sandbox's default context
 * per language (made on first use, made again if deleted); and runs by id — live ones, and finished
 * ones for a short while (like finished execs) so a broken stream can resume. Ids are minted here
 * and never reused, so a context from before a restart is reported gone, never silently replaced.
 *
 * Default contexts can be warm: started with the server, unlisted, and taken by the first run that
 * wants one, so even that run finds its interpreter ready. One started before the sandbox's env
 * changed is let go instead (it would not see the change), and a fresh one is made.
 * A run named by an idempotency key runs at most once: a retry of it attaches (engine/run-keys.ts).
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { DEFAULT_CODE_LANGUAGE, type CodeLanguage, type CreateCodeContextRequest, type RunCodeRequest } from "../../protocol/code.ts";
import { DEFAULT_EXECUTION_LIMITS } from "../../protocol/code-execution.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { FinishedExecs } from "../engine/finished-execs.ts";
import { fingerprintOf, keyReused, RunKeys } from "../engine/run-keys.ts";
import { CodeContext, type ContextDeps } from "./code-context.ts";
import { CodeExecution } from "./execution.ts";

export interface RunMode {
  /** Buffered: keep what the Execution needs. Streamed: the events are all there is. */
  buffered: boolean;
}

export class CodeContexts {
  readonly #deps: ContextDeps;
  readonly #contexts = new Map<string, CodeContext>();
  /** Creations under way, counted against the limit before they exist. */
  #creating = 0;
  readonly #defaults = new Map<CodeLanguage, Promise<CodeContext>>();
  readonly #executions = new Map<string, CodeExecution>();
  readonly #finished: FinishedExecs<CodeExecution>;
  /** Warm default contexts not yet taken, with the sandbox env's version they started under. */
  readonly #warm = new Map<CodeLanguage, Promise<{ context: CodeContext; envVersion: number } | undefined>>();
  readonly #keys: RunKeys;
  /** Keyed runs being accepted (their context may still be starting): a copy arriving meanwhile waits for the same run. */
  readonly #accepting = new Map<string, { fingerprint: string; run: Promise<CodeExecution> }>();
  #closed = false;

  constructor(deps: ContextDeps) {
    this.#deps = deps;
    this.#finished = new FinishedExecs<CodeExecution>(deps.limits, (execution) => {
      if (this.#executions.get(execution.id) === execution) this.#executions.delete(execution.id);
      this.#keys.recordGone(execution.id, { status: "finished", exitCode: undefined });
    });
    this.#keys = new RunKeys(deps.limits);
  }

  /** run(), at most once per idempotency key: a retry of the same request gets the first run (`attached`). */
  async runOnce(request: RunCodeRequest, mode: RunMode): Promise<{ execution: CodeExecution; attached: boolean }> {
    const key = request.idempotencyKey;
    if (key === undefined) return { execution: await this.run(request, mode), attached: false };
    const fingerprint = fingerprintOf(mode.buffered ? "code/buffered" : "code/stream", request);
    const accepting = this.#accepting.get(key);
    if (accepting) {
      if (accepting.fingerprint !== fingerprint) throw keyReused(key);
      return { execution: await accepting.run, attached: true };
    }
    const earlier = this.#keys.find(key, fingerprint);
    if (earlier !== undefined) return { execution: this.execution(earlier), attached: true };
    const run = this.run(request, mode);
    this.#accepting.set(key, { fingerprint, run });
    try {
      const execution = await run;
      this.#keys.claim(key, fingerprint, execution.id);
      return { execution, attached: false };
    } finally {
      this.#accepting.delete(key);
    }
  }

  async create(request: CreateCodeContextRequest, isDefault = false): Promise<CodeContext> {
    if (this.#closed) throw new ServiceError("CONTAINER_UNAVAILABLE", "the server is shutting down");
    const limit = this.#deps.limits.maxCodeContexts;
    if (this.#contexts.size + this.#creating >= limit) {
      throw new ServiceError("TOO_MANY_CODE_CONTEXTS", `too many code contexts (limit ${limit}): delete one first`, { limit });
    }
    this.#creating++;
    try {
      const context = await CodeContext.create(
        newId("ctx"),
        {
          language: request.language ?? DEFAULT_CODE_LANGUAGE,
          cwd: request.cwd === undefined ? undefined : resolve(this.#deps.workspace, request.cwd),
          env: request.env,
          sessionId: request.sessionId,
          isDefault,
        },
        this.#deps,
      );
      if (this.#closed) {
        await context.close();
        throw new ServiceError("CONTAINER_UNAVAILABLE", "the server is shutting down");
      }
      this.#contexts.set(context.id, context);
      return context;
    } finally {
      this.#creating--;
    }
  }

  get(id: string): CodeContext {
    const context = this.#contexts.get(id);
    if (!context) throw new ServiceError("CODE_CONTEXT_NOT_FOUND", `code context ${id} not found`, { contextId: id });
    return context;
  }

  list(): CodeContext[] {
    return [...this.#contexts.values()];
  }

  async restart(id: string): Promise<CodeContext> {
    const context = this.get(id);
    await context.restart();
    return context;
  }

  /** Deletes a context; resolves with how many of its runs were stopped. */
  async delete(id: string): Promise<number> {
    const context = this.get(id);
    this.#contexts.delete(id);
    return context.close();
  }

  /** Accepts a run (its `start` is logged); it runs when its context is free. */
  async run(request: RunCodeRequest, mode: RunMode): Promise<CodeExecution> {
    const context = request.contextId !== undefined ? this.get(request.contextId) : await this.#defaultContext(request.language ?? DEFAULT_CODE_LANGUAGE);
    if (request.language !== undefined && request.language !== context.language) {
      throw new ServiceError("INVALID_REQUEST", `code context ${context.id} runs ${context.language}, not ${request.language}`, {
        contextId: context.id,
        language: context.language,
      });
    }
    const capture = mode.buffered ? { ...DEFAULT_EXECUTION_LIMITS, maxOutputBytes: request.maxOutputBytes ?? this.#deps.limits.defaultExecOutputBytes } : undefined;
    const execution = new CodeExecution(
      newId("run"),
      context,
      { code: request.code, timeoutMs: request.timeout, capture, interruptOnDisconnect: request.interruptOnDisconnect ?? false, env: request.env },
      this.#deps.limits,
    );
    context.submit(execution, request.wait ?? true);
    this.#executions.set(execution.id, execution);
    void execution.finished.then(() => {
      if (this.#executions.get(execution.id) === execution) this.#finished.add(execution);
    });
    return execution;
  }

  /** Runs not over yet (running, or waiting their turn): work that keeps the sandbox awake. */
  get runningCount(): number {
    let count = 0;
    for (const execution of this.#executions.values()) if (!execution.isOver) count++;
    return count;
  }

  /** A live run, or a finished one still kept for resuming. */
  execution(id: string): CodeExecution {
    const execution = this.#executions.get(id);
    if (!execution) throw new ServiceError("CODE_EXECUTION_NOT_FOUND", `code run ${id} not found (or finished too long ago)`, { executionId: id });
    return execution;
  }

  /** Interrupts a run; false when it was already over. */
  interrupt(id: string): boolean {
    const execution = this.execution(id);
    const context = this.#contexts.get(execution.contextId);
    return context ? context.interrupt(execution) : false;
  }

  /** Starts the default context of each language in the background, for the first run to take. */
  warm(languages: readonly CodeLanguage[]): void {
    for (const language of languages) {
      if (this.#warm.has(language) || this.#defaults.has(language)) continue;
      const envVersion = this.#deps.environment.version;
      const starting = CodeContext.create(newId("ctx"), { language, cwd: undefined, env: undefined, sessionId: undefined, isDefault: true }, this.#deps).then(
        (context) => ({ context, envVersion }),
        () => undefined, // the first run starts one itself, and says why if it cannot
      );
      this.#warm.set(language, starting);
    }
  }

  /** Kills every interpreter; no new contexts afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    const warm = [...this.#warm.values()];
    this.#warm.clear();
    await Promise.all(warm.map(async (starting) => (await starting)?.context.close()));
    const contexts = [...this.#contexts.values()];
    this.#contexts.clear();
    await Promise.all(contexts.map((context) => context.close()));
    this.#finished.close();
  }

  /** The sandbox's default context of a language: made on first use, and again if it was deleted. */
  async #defaultContext(language: CodeLanguage): Promise<CodeContext> {
    const known = this.#defaults.get(language);
    if (known) {
      const context = await known.catch(() => undefined);
      if (context && this.#contexts.get(context.id) === context) return context;
      if (this.#defaults.get(language) !== known) return this.#defaultContext(language);
    }
    const creating = this.#takeWarm(language).then((warm) => warm ?? this.create({ language }, true));
    this.#defaults.set(language, creating);
    try {
      return await creating;
    } catch (error) {
      if (this.#defaults.get(language) === creating) this.#defaults.delete(language);
      throw error;
    }
  }

  /** The warm default context of a language, if there is one and the sandbox env has not changed since it started. */
  async #takeWarm(language: CodeLanguage): Promise<CodeContext | undefined> {
    const starting = this.#warm.get(language);
    if (!starting) return undefined;
    this.#warm.delete(language);
    const warm = await starting;
    if (!warm) return undefined;
    if (this.#closed || warm.envVersion !== this.#deps.environment.version) {
      await warm.context.close();
      return undefined;
    }
    this.#contexts.set(warm.context.id, warm.context);
    return warm.context;
  }
}

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString("base64url")}`;
}
