/**
 * The process table: every record by id, the limits on how many run, how long finished ones stay,
 * and the operations the routes need (launch, find, kill, kill-all, cleanup). One per server.
 *
 * Every launch gets a run tag, `<server's tag>/<n>`, in its environment (RUN_TAG_VAR, set after
 * everything else so no caller's env replaces it): a kill or a timeout of the command reaches what it
 * started outside its process group, and kill-all and close reach what finished commands left running.
 *
 * Finished background records stay for `finishedRetentionMs` (or until cleanup, without autoCleanup).
 * Finished exec records stay briefly (FinishedExecs) so a broken exec stream can resume by id; their
 * ids are free for reuse meanwhile, and the routes leave them out of lists unless asked.
 *
 * A run named by an idempotency key or by the caller's process id is run at most once: `run` hands a
 * retry of the same request the record of the first run instead of launching (run-keys.ts).
 */
import { randomBytes } from "node:crypto";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { isServiceError, ServiceError } from "../../server-kit/service-error.ts";
import { processesTaggedBelow, processesTaggedExactly } from "../../server-kit/tagged-processes.ts";
import type { ServerLimits } from "../config.ts";
import type { CommandEnvironment } from "./environment.ts";
import { FinishedExecs } from "./finished-execs.ts";
import { SpawnHooks, type SpawnRequest } from "./hooks.ts";
import { isTerminatingSignal, signalPids, terminateTagged } from "./kill.ts";
import { ManagedProcess } from "./managed-process.ts";
import { RunKeys } from "./run-keys.ts";
import type { CommandSpec } from "./options.ts";
import { checkCwd, initialPlan, spawnChild } from "./spawn.ts";

export interface ProcessFilter {
  sessionId?: string | undefined;
  /** Only records of this kind (default: both). */
  kind?: CommandSpec["kind"] | undefined;
}

export class ProcessTable {
  readonly workspace: string;
  readonly limits: ServerLimits;
  /** The server's run tag: every command's tag is below it. */
  readonly runTag: string;
  readonly hooks = new SpawnHooks();
  /** Where every command's environment comes from. */
  readonly #environment: CommandEnvironment;
  readonly #records = new Map<string, ManagedProcess>();
  readonly #cleanupTimers = new Map<string, NodeJS.Timeout>();
  readonly #finishedExecs: FinishedExecs;
  readonly #keys: RunKeys;
  #live = 0;
  #launches = 0;
  #closed = false;

  constructor(workspace: string, limits: ServerLimits, environment: CommandEnvironment, runTag: string) {
    this.workspace = workspace;
    this.limits = limits;
    this.runTag = runTag;
    this.#environment = environment;
    this.#finishedExecs = new FinishedExecs(limits, (record) => this.#remove(record));
    this.#keys = new RunKeys(limits);
  }

  /** Idempotency keys remembered now. */
  get idempotencyKeys(): number {
    return this.#keys.size;
  }

  /**
   * The run for a request: the one its idempotency key or process id already names, when that run
   * was asked for the same way (`attached`), else a new launch. A key used for another request is
   * refused (IDEMPOTENCY_KEY_REUSED); a key whose run's record is gone answers IDEMPOTENT_RUN_GONE;
   * a process id taken by another request stays PROCESS_EXISTS.
   */
  async run(spec: CommandSpec): Promise<{ record: ManagedProcess; attached: boolean }> {
    const earlier = this.#earlierRun(spec);
    if (earlier) return { record: earlier, attached: true };
    return { record: await this.launch(spec), attached: false };
  }

  #earlierRun(spec: CommandSpec): ManagedProcess | undefined {
    if (spec.fingerprint === undefined) return undefined;
    const id = spec.idempotencyKey === undefined ? spec.processId : (this.#keys.find(spec.idempotencyKey, spec.fingerprint) ?? spec.processId);
    const record = id === undefined ? undefined : this.#records.get(id);
    // A record that never started (its spawn failed) is no run to attach to.
    if (!record || record.spec.fingerprint !== spec.fingerprint || (record.status === "error" && record.pid === undefined)) return undefined;
    return record;
  }

  get liveCount(): number {
    return this.#live;
  }

  /** Live processes that keep the sandbox awake: all but those started with `keepAlive: false`. */
  get keepingAwakeCount(): number {
    let count = 0;
    for (const record of this.#records.values()) if (record.isLive && record.spec.keepAlive !== false) count++;
    return count;
  }

  /** Finished exec records kept for resuming, and what their logs retain. */
  get finishedExecs(): { count: number; bytes: number } {
    return { count: this.#finishedExecs.size, bytes: this.#finishedExecs.bytes };
  }

  /**
   * Creates the record, runs the spawn hooks and spawns. Resolves with a running process; a command
   * that cannot start leaves a record in status `error` and rejects with SPAWN_FAILED (or the hook's code).
   */
  async launch(spec: CommandSpec): Promise<ManagedProcess> {
    if (this.#closed) throw new ServiceError("CONTAINER_UNAVAILABLE", "the server is shutting down");
    const id = spec.processId ?? newProcessId();
    const existing = this.#records.get(id);
    // A finished exec is kept only for a late reader: reusing its id replaces it.
    if (existing && this.#finishedExecs.has(existing)) this.#remove(existing);
    else if (existing) throw new ServiceError("PROCESS_EXISTS", `process ${id} already exists`, { processId: id });
    if (this.#live >= this.limits.maxLiveProcesses) {
      throw new ServiceError("TOO_MANY_PROCESSES", `too many live processes (limit ${this.limits.maxLiveProcesses})`, {
        limit: this.limits.maxLiveProcesses,
      });
    }
    const record = new ManagedProcess(id, spec, this.limits, `${this.runTag}/${++this.#launches}`);
    this.#records.set(id, record);
    // Claimed before the first await: a copy of this request arriving meanwhile attaches to this run.
    if (spec.idempotencyKey !== undefined && spec.fingerprint !== undefined) this.#keys.claim(spec.idempotencyKey, spec.fingerprint, id);
    this.#live++;
    void record.finished.then(() => this.#onFinished(record));

    const request: SpawnRequest = {
      kind: spec.kind,
      processId: id,
      command: spec.command,
      args: spec.args,
      cwd: spec.cwd,
      env: spec.env,
      sessionId: spec.sessionId,
      timeoutMs: spec.timeoutMs,
      workspace: this.workspace,
    };
    try {
      const initial = initialPlan(spec, this.workspace, this.#environment);
      initial.env[RUN_TAG_VAR] = record.tag;
      const { plan, onExit } = await this.hooks.prepare(initial, request);
      plan.env[RUN_TAG_VAR] = record.tag; // a session's or the call's env does not replace it
      checkCwd(plan.cwd);
      const stdin = spec.keepStdinOpen || spec.stdin !== undefined ? "pipe" : "ignore";
      const child = await spawnChild(plan, spec.args === undefined ? plan.file : spec.command, stdin);
      record.attach(child, plan.cwd, onExit, spec.timeoutMs ?? plan.timeoutMs);
      return record;
    } catch (error) {
      const failure = isServiceError(error)
        ? error
        : new ServiceError("SPAWN_FAILED", `cannot start process: ${(error as Error).message}`);
      record.failToStart(failure.message);
      this.#keys.release(id);
      throw new ServiceError(failure.code, failure.message, { ...failure.context, processId: id });
    }
  }

  find(id: string): ManagedProcess | undefined {
    return this.#records.get(id);
  }

  get(id: string): ManagedProcess {
    const record = this.#records.get(id);
    if (!record) throw new ServiceError("PROCESS_NOT_FOUND", `process ${id} not found`, { processId: id });
    return record;
  }

  list(filter: ProcessFilter = {}): ManagedProcess[] {
    return [...this.#records.values()].filter((record) => matches(record, filter));
  }

  /**
   * Signals a process's group and waits (bounded by the grace period) until it has exited.
   * A process that already finished is left alone: killing is idempotent.
   */
  async kill(id: string, signal: NodeJS.Signals): Promise<ManagedProcess> {
    const record = this.get(id);
    if (record.kill(signal) && isTerminatingSignal(signal)) await waitBounded(record.finished, this.limits.killGraceMs + 1000);
    return record;
  }

  /**
   * Kills every live process (of one session, with a filter); resolves with how many were signalled.
   * A terminating signal also ends what finished commands left running (all commands', or the
   * session's records').
   */
  async killAll(filter: ProcessFilter = {}, signal: NodeJS.Signals = "SIGTERM"): Promise<number> {
    const matching = this.list(filter);
    const targets = matching.filter((record) => record.kill(signal));
    if (!isTerminatingSignal(signal)) return targets.length;
    const everything = filter.sessionId === undefined && filter.kind === undefined;
    const tags = matching.map((record) => record.tag);
    terminateTagged(
      () => (everything ? processesTaggedBelow(this.runTag) : tags.flatMap((tag) => processesTaggedExactly(tag))),
      signal,
      this.limits.killGraceMs,
    );
    await waitBounded(Promise.all(targets.map((record) => record.finished)), this.limits.killGraceMs + 1000);
    return targets.length;
  }

  /** Removes finished records now; resolves with how many. */
  cleanup(filter: ProcessFilter = {}): number {
    let cleaned = 0;
    for (const record of this.list(filter)) {
      if (record.isLive) continue;
      this.#remove(record);
      cleaned++;
    }
    return cleaned;
  }

  /** SIGKILLs every process and waits for them; no new launches afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    const live = [...this.#records.values()].filter((record) => record.kill("SIGKILL"));
    signalPids(processesTaggedBelow(this.runTag), "SIGKILL");
    await waitBounded(Promise.all(live.map((record) => record.finished)), 5000);
    for (const timer of this.#cleanupTimers.values()) clearTimeout(timer);
    this.#cleanupTimers.clear();
    this.#finishedExecs.close();
  }

  #onFinished(record: ManagedProcess): void {
    this.#live--;
    if (this.#records.get(record.id) !== record) return;
    // An exec's result went to its caller; the record stays a short while for a reader to resume.
    if (record.spec.kind === "exec") {
      this.#finishedExecs.add(record);
      return;
    }
    if (!record.spec.autoCleanup) return;
    const timer = setTimeout(() => this.#remove(record), this.limits.finishedRetentionMs);
    timer.unref();
    this.#cleanupTimers.set(record.id, timer);
    this.#evictOverflow();
  }

  /** Too many finished background records: the oldest auto-cleaned ones go first. */
  #evictOverflow(): void {
    const finished = [...this.#records.values()].filter(
      (record) => !record.isLive && record.spec.kind === "background" && record.spec.autoCleanup,
    );
    const excess = finished.length - this.limits.maxFinishedRecords;
    if (excess <= 0) return;
    finished.sort((a, b) => (a.endTime?.getTime() ?? 0) - (b.endTime?.getTime() ?? 0));
    for (const record of finished.slice(0, excess)) this.#remove(record);
  }

  /** Drops a record (if it is still the one under its id) and whatever was keeping it. */
  #remove(record: ManagedProcess): void {
    this.#finishedExecs.delete(record);
    if (this.#records.get(record.id) !== record) return;
    this.#records.delete(record.id);
    this.#keys.recordGone(record.id, { status: record.status, exitCode: record.exit?.exitCode });
    const timer = this.#cleanupTimers.get(record.id);
    if (timer) clearTimeout(timer);
    this.#cleanupTimers.delete(record.id);
  }
}

function matches(record: ManagedProcess, filter: ProcessFilter): boolean {
  return (
    (filter.sessionId === undefined || record.spec.sessionId === filter.sessionId) &&
    (filter.kind === undefined || record.spec.kind === filter.kind)
  );
}

/** Random bytes for ids, drawn in bulk: one call into the CSPRNG per 512 ids rather than per id. */
const ID_BYTES = 9;
let idPool = Buffer.alloc(0);
let idPoolOffset = 0;

function newProcessId(): string {
  if (idPoolOffset + ID_BYTES > idPool.length) {
    idPool = randomBytes(ID_BYTES * 512);
    idPoolOffset = 0;
  }
  const id = idPool.toString("base64url", idPoolOffset, idPoolOffset + ID_BYTES);
  idPoolOffset += ID_BYTES;
  return `proc_${id}`;
}

async function waitBounded(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
