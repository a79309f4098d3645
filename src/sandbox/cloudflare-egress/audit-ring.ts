/**
 * The audit trail of a sandbox on Cloudflare, kept by its Durable Object: each request the Worker's
 * outbound handler judged, numbered from 1, in a ring of NETWORK_LIMITS.auditEntries rows of the
 * Durable Object's SQL storage (the oldest go first). It is read as the local runtime's trail is
 * (protocol/audit-page.ts: `next`, `dropped`), outlives the container and the Durable Object's
 * eviction, and lets a reader that has seen everything wait for the next entry.
 */
import { auditPageOf } from "../../../protocol/audit-page.ts";
import { NETWORK_LIMITS, type AuditEntry, type AuditPage } from "../../../protocol/network.ts";

/** An entry before the ring numbers and dates it. */
export type AuditRecord = Omit<AuditEntry, "seq" | "time">;

const TABLE = "egress_audit";

export class AuditRing {
  readonly #sql: SqlStorage;
  readonly #capacity: number;
  #ready = false;
  #waiters = new Set<() => void>();

  constructor(sql: SqlStorage, capacity: number = NETWORK_LIMITS.auditEntries) {
    this.#sql = sql;
    this.#capacity = capacity;
  }

  add(record: AuditRecord): AuditEntry {
    this.#table();
    const entry: AuditEntry = { seq: this.#lastSeq() + 1, time: new Date().toISOString(), ...record };
    this.#sql.exec(`INSERT INTO ${TABLE} (seq, entry) VALUES (?, ?)`, entry.seq, JSON.stringify(entry));
    this.#sql.exec(`DELETE FROM ${TABLE} WHERE seq <= ?`, entry.seq - this.#capacity);
    const waiters = this.#waiters;
    this.#waiters = new Set();
    for (const wake of waiters) wake();
    return entry;
  }

  read(since = 0, limit: number = NETWORK_LIMITS.maxAuditPage): AuditPage {
    this.#table();
    const after = this.#sql
      .exec<{ entry: string }>(`SELECT entry FROM ${TABLE} WHERE seq > ? ORDER BY seq LIMIT ?`, since, limit)
      .toArray()
      .map((row) => JSON.parse(row.entry) as AuditEntry);
    const bounds = this.#sql.exec<{ oldest: number | null; last: number | null }>(`SELECT MIN(seq) AS oldest, MAX(seq) AS last FROM ${TABLE}`).one();
    return auditPageOf(after, bounds.oldest ?? undefined, bounds.last ?? 0, since);
  }

  /** Resolves once an entry after `since` exists, after `waitMs`, or when `signal` aborts. */
  async waitAfter(since: number, waitMs: number, signal?: AbortSignal): Promise<void> {
    this.#table();
    if (this.#lastSeq() > since || waitMs <= 0 || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const waiters = this.#waiters;
      const timer = setTimeout(done, waitMs);
      signal?.addEventListener("abort", done, { once: true });
      function done(): void {
        clearTimeout(timer);
        waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      waiters.add(done);
    });
  }

  #lastSeq(): number {
    return this.#sql.exec<{ last: number | null }>(`SELECT MAX(seq) AS last FROM ${TABLE}`).one().last ?? 0;
  }

  #table(): void {
    if (this.#ready) return;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (seq INTEGER PRIMARY KEY, entry TEXT NOT NULL)`);
    this.#ready = true;
  }
}
