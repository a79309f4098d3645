/**
 * Idempotency keys across container restarts. The container remembers each key with its run
 * (container/engine/run-keys.ts), but a container that stops (sleep, a crash, an eviction) forgets
 * them, and a retry reaching the next container would run the command a second time. So the Durable
 * Object notes, for each key, the container generation it first sent the key to, for the key's
 * window, in its SQL storage (which outlives both the container and the Durable Object's own
 * eviction). A key first sent to an earlier container answers IDEMPOTENT_RUN_GONE: its run, finished
 * or cut short, belonged to a container that is gone, and it is not run again.
 *
 * The note is written before the request leaves for the container, so a run can never exist without
 * it; a key noted for a container that then never saw the request is refused all the same (the
 * rule errs towards not running twice).
 */
import { LIMITS } from "../../protocol/limits.ts";
import { errorFromCode } from "../rpc/errors.ts";
import type { Generation } from "./generation.ts";

const TABLE = "run_key_claims";

export interface RunKeyLimits {
  idempotencyWindowMs: number;
  maxIdempotencyKeys: number;
}

export class RunKeyClaims {
  readonly #sql: SqlStorage;
  readonly #limits: RunKeyLimits;
  #ready = false;

  constructor(sql: SqlStorage, limits: RunKeyLimits = LIMITS) {
    this.#sql = sql;
    this.#limits = limits;
  }

  /**
   * Notes that `key` goes to this generation's container, or throws IDEMPOTENT_RUN_GONE when the key
   * already went to an earlier one within its window. No key, nothing to note.
   */
  claim(key: string | undefined, generation: Generation): void {
    if (key === undefined) return;
    this.#table();
    const now = Date.now();
    this.#sql.exec(`DELETE FROM ${TABLE} WHERE expires_at <= ?`, now);
    const earlier = this.#sql.exec<{ generation: number }>(`SELECT generation FROM ${TABLE} WHERE key = ? AND instance != ?`, key, generation.instanceId).toArray()[0];
    if (earlier) {
      throw errorFromCode(
        "IDEMPOTENT_RUN_GONE",
        `the run for idempotency key ${JSON.stringify(key)} was sent to an earlier container of this sandbox ` +
          `(generation ${earlier.generation}; now ${generation.number}), which has since stopped; it is not run again`,
        { context: { idempotencyKey: key, generation: earlier.generation } },
      );
    }
    this.#sql.exec(
      `INSERT OR IGNORE INTO ${TABLE} (key, instance, generation, expires_at) VALUES (?, ?, ?, ?)`,
      key,
      generation.instanceId,
      generation.number,
      now + this.#limits.idempotencyWindowMs,
    );
    // Every key lives the same window, so the soonest to expire are the oldest.
    this.#sql.exec(
      `DELETE FROM ${TABLE} WHERE key IN (SELECT key FROM ${TABLE} ORDER BY expires_at DESC LIMIT -1 OFFSET ?)`,
      this.#limits.maxIdempotencyKeys,
    );
  }

  /** The sandbox was destroyed: what ran before is no one's to attach to. */
  forget(): void {
    this.#table();
    this.#sql.exec(`DELETE FROM ${TABLE}`);
  }

  #table(): void {
    if (this.#ready) return;
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (key TEXT PRIMARY KEY, instance TEXT NOT NULL, generation INTEGER NOT NULL, expires_at INTEGER NOT NULL)`,
    );
    this.#sql.exec(`CREATE INDEX IF NOT EXISTS ${TABLE}_expiry ON ${TABLE} (expires_at)`);
    this.#ready = true;
  }
}
