/**
 * A sandbox's audit trail as the runtime keeps it: every connection, request and name lookup the
 * proxy decided on, numbered from 1, in a ring of NETWORK_LIMITS.auditEntries (the oldest go first).
 * A reader asks for what came after the last number it saw and learns how many it missed; a reader
 * that has seen everything may wait for the next entry.
 */
import { auditPageOf } from "../../protocol/audit-page.ts";
import { NETWORK_LIMITS, type AuditEntry, type AuditPage } from "../../protocol/network.ts";

export type AuditRecord = Omit<AuditEntry, "seq" | "time">;

export class AuditLog {
  readonly #entries: AuditEntry[] = [];
  readonly #capacity: number;
  #last = 0;
  #waiters = new Set<() => void>();

  constructor(capacity: number = NETWORK_LIMITS.auditEntries) {
    this.#capacity = capacity;
  }

  get lastSeq(): number {
    return this.#last;
  }

  add(record: AuditRecord): AuditEntry {
    const entry: AuditEntry = { seq: ++this.#last, time: new Date().toISOString(), ...record };
    this.#entries.push(entry);
    if (this.#entries.length > this.#capacity) this.#entries.shift();
    const waiters = this.#waiters;
    this.#waiters = new Set();
    for (const wake of waiters) wake();
    return entry;
  }

  read(since = 0, limit: number = NETWORK_LIMITS.maxAuditPage): AuditPage {
    return auditPageOf(this.#entries.filter((entry) => entry.seq > since).slice(0, limit), this.#entries[0]?.seq, this.#last, since);
  }

  /** Resolves once an entry after `since` exists, or after `waitMs`. */
  async waitAfter(since: number, waitMs: number): Promise<void> {
    if (this.#last > since || waitMs <= 0) return;
    await new Promise<void>((resolve) => {
      const waiters = this.#waiters;
      const timer = setTimeout(done, waitMs);
      function done(): void {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      }
      waiters.add(done);
    });
  }
}
