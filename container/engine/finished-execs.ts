/**
 * Finished exec records, kept a short while after exit so a client whose exec stream broke can still
 * resume it (and read its status and logs) by id. Bounded three ways: a time window, a number of
 * records and the bytes their logs retain. The oldest go first.
 *
 * Records arrive in the order they finish, and every one is kept for the same window, so the oldest
 * is always the next to expire: one timer, armed for the head of the queue, does all the expiring.
 */
import type { ManagedProcess } from "./managed-process.ts";

export interface FinishedExecLimits {
  finishedExecRetentionMs: number;
  maxFinishedExecs: number;
  maxFinishedExecBytes: number;
}

/** What a kept record costs beyond its log (the record, its spec, its map entries). */
const RECORD_OVERHEAD = 1024;

interface Kept {
  expiresAt: number;
  bytes: number;
}

/** What can be kept: anything with a log (a finished exec; a finished code cell run). */
export interface KeptRecord {
  readonly log: { readonly footprintBytes: number };
  /** A buffered result still held for a retry to attach to (an exec run under a key or a caller's id). */
  readonly capturedBytes?: number;
}

export class FinishedExecs<R extends KeptRecord = ManagedProcess> {
  readonly #limits: FinishedExecLimits;
  /** Called for every record that leaves (expired or evicted), to drop it from the process table. */
  readonly #evict: (record: R) => void;
  /** In finishing order, so the first entry is the oldest. */
  readonly #kept = new Map<R, Kept>();
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(limits: FinishedExecLimits, evict: (record: R) => void) {
    this.#limits = limits;
    this.#evict = evict;
  }

  get size(): number {
    return this.#kept.size;
  }

  /** Bytes the kept records' logs hold (as of when each was kept), plus a fixed overhead each. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Keeps a record that just finished; evicts the oldest ones past the limits (this one too if it alone is). */
  add(record: R): void {
    const bytes = record.log.footprintBytes + (record.capturedBytes ?? 0) + RECORD_OVERHEAD;
    this.#kept.set(record, { expiresAt: Date.now() + this.#limits.finishedExecRetentionMs, bytes });
    this.#bytes += bytes;
    for (const oldest of this.#kept.keys()) {
      if (this.#kept.size <= this.#limits.maxFinishedExecs && this.#bytes <= this.#limits.maxFinishedExecBytes) break;
      this.#drop(oldest);
    }
    this.#arm();
  }

  /** Forgets a record (removed by other means: cleanup, or its id reused); no eviction callback. */
  delete(record: R): void {
    const kept = this.#kept.get(record);
    if (!kept) return;
    this.#kept.delete(record);
    this.#bytes -= kept.bytes;
  }

  has(record: R): boolean {
    return this.#kept.has(record);
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #drop(record: R): void {
    this.delete(record);
    this.#evict(record);
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    const oldest = this.#kept.values().next();
    if (oldest.done) return;
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, oldest.value.expiresAt - Date.now()));
    this.#timer.unref();
  }

  #expire(): void {
    this.#timer = undefined;
    const now = Date.now();
    for (const [record, kept] of this.#kept) {
      if (kept.expiresAt > now) break;
      this.#drop(record);
    }
    this.#arm();
  }
}
