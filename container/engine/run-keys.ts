/**
 * Idempotency keys (protocol/idempotency.ts): which run each key started, and what was asked, for
 * the key's window. The first request with a key claims it before anything is spawned, so two
 * copies of one request arriving together start one run; a later copy finds the claim and attaches.
 * A copy that asks for something else under the same key is refused (IDEMPOTENCY_KEY_REUSED).
 *
 * Every key lives for the same window from its claim, so the map's insertion order is also expiry
 * order: expired keys are dropped from its head whenever it is touched, and past the count bound the
 * oldest goes first. No timers.
 *
 * Records, not keys, decide how long a run can be attached to: when the table lets a record go
 * while its key is still remembered, the key keeps how the run ended, and a retry is told that
 * (IDEMPOTENT_RUN_GONE) instead of running the command again.
 */
import { createHash } from "node:crypto";
import { ServiceError } from "../../server-kit/service-error.ts";

export interface RunKeyLimits {
  idempotencyWindowMs: number;
  maxIdempotencyKeys: number;
}

/** How a run that can no longer be attached to ended. */
export interface RunEnd {
  status: string;
  exitCode: number | null | undefined;
}

interface Claim {
  fingerprint: string;
  runId: string;
  expiresAt: number;
  /** Set once the run's record is gone. */
  ended: RunEnd | undefined;
}

/**
 * What a request asked for, as a digest: the same request gives the same digest whatever order
 * its fields came in. `kind` tells runs of different routes apart (a buffered exec, a streamed one,
 * a background process) so a key cannot be attached to across them.
 */
export function fingerprintOf(kind: string, request: object): string {
  const { idempotencyKey: _key, ...asked } = request as { idempotencyKey?: unknown };
  return createHash("sha256").update(kind).update("\0").update(canonicalJson(asked)).digest("base64url");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, field]) => `${JSON.stringify(name)}:${canonicalJson(field)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export class RunKeys {
  readonly #limits: RunKeyLimits;
  readonly #claims = new Map<string, Claim>();
  /** Run id → its key, to record how the run ended when its record goes. */
  readonly #keyOfRun = new Map<string, string>();

  constructor(limits: RunKeyLimits) {
    this.#limits = limits;
  }

  get size(): number {
    this.#expire();
    return this.#claims.size;
  }

  /**
   * The run this key started, if the key is remembered: its id, or how it ended when its record is
   * gone (thrown as IDEMPOTENT_RUN_GONE). A different request under the key is refused.
   */
  find(key: string, fingerprint: string): string | undefined {
    this.#expire();
    const claim = this.#claims.get(key);
    if (!claim) return undefined;
    if (claim.fingerprint !== fingerprint) throw keyReused(key, claim.runId);
    if (claim.ended) throw gone(key, claim.runId, claim.ended);
    return claim.runId;
  }

  claim(key: string, fingerprint: string, runId: string): void {
    this.#expire();
    this.#claims.set(key, { fingerprint, runId, expiresAt: Date.now() + this.#limits.idempotencyWindowMs, ended: undefined });
    this.#keyOfRun.set(runId, key);
    for (const oldest of this.#claims.keys()) {
      if (this.#claims.size <= this.#limits.maxIdempotencyKeys) break;
      this.#drop(oldest);
    }
  }

  /** The run never started (its spawn failed): a retry may try again. */
  release(runId: string): void {
    const key = this.#keyOfRun.get(runId);
    if (key !== undefined && this.#claims.get(key)?.runId === runId) this.#drop(key);
  }

  /** The run's record is being let go: its key, while remembered, answers with how it ended. */
  recordGone(runId: string, ended: RunEnd): void {
    const key = this.#keyOfRun.get(runId);
    if (key === undefined) return;
    this.#keyOfRun.delete(runId);
    const claim = this.#claims.get(key);
    if (claim?.runId === runId) claim.ended = ended;
  }

  #drop(key: string): void {
    const claim = this.#claims.get(key);
    this.#claims.delete(key);
    if (claim && this.#keyOfRun.get(claim.runId) === key) this.#keyOfRun.delete(claim.runId);
  }

  #expire(): void {
    const now = Date.now();
    for (const [key, claim] of this.#claims) {
      if (claim.expiresAt > now) break;
      this.#drop(key);
    }
  }
}

export function keyReused(key: string, runId?: string): ServiceError {
  const run = runId === undefined ? "" : ` (run ${runId})`;
  return new ServiceError("IDEMPOTENCY_KEY_REUSED", `idempotency key ${JSON.stringify(key)} was used for a different request${run}`, {
    idempotencyKey: key,
    ...(runId === undefined ? {} : { processId: runId }),
  });
}

function gone(key: string, runId: string, ended: RunEnd): ServiceError {
  const how = ended.exitCode === null || ended.exitCode === undefined ? ended.status : `${ended.status}, exit code ${ended.exitCode}`;
  return new ServiceError(
    "IDEMPOTENT_RUN_GONE",
    `the run for idempotency key ${JSON.stringify(key)} already happened (${how}) and its record is no longer kept; it is not run again`,
    { idempotencyKey: key, processId: runId, status: ended.status, ...(ended.exitCode === undefined ? {} : { exitCode: ended.exitCode }) },
  );
}
