/**
 * One ordered log per process: output chunks and status changes, each with a `seq` (from 1), output
 * chunks with their byte offset in their own stream. Retention is a bounded ring: `retentionBytes`
 * of output, and at most `maxEntries` entries; past either, the oldest entries are dropped and
 * counted, so memory never grows with the amount of output.
 *
 * The two bounds are separate so that small chunks do not shrink what is kept: `retentionBytes` of
 * output is kept whatever the chunk size, unless chunks average under ENTRY_BUDGET_BYTES (then the
 * entry bound, which caps the bookkeeping, is what binds).
 *
 * A reader may pin the log (an exec stream does): entries it has not read yet are not dropped;
 * instead the log reports pressure and the producer pauses the pipes until the reader catches up.
 * While pinned readers read, a reading window can keep the log smaller than its retention: the
 * producer is held back once `unreadBytes` wait to be read, and of what was read only the last
 * `sentBytes` stay (for a reader that reconnects and needs again what was sent but never arrived).
 */
import type { StatusFields } from "../../protocol/events.ts";
import type { OutputStream } from "../../protocol/process.ts";
import { LogStore, type ErrorEntry, type LogEntry, type OutputEntry, type RecordEntry, type StatusEntry, type StreamPositions } from "./log-store.ts";

export type { ErrorEntry, LogEntry, OutputEntry, RecordEntry, StatusEntry, StreamPositions };

/** What a reader gets instead of entries that were dropped before it read them. */
export interface TruncatedNotice {
  kind: "truncated";
  /** The last dropped entry's seq: a reader that resumes after this notice is not told again. */
  seq: number;
  time: number;
  droppedEvents: number;
  /** Output bytes the reader asked for that are gone, in all and per stream. */
  droppedBytes: number;
  stdoutDropped: number;
  stderrDropped: number;
}

/** Where a reader stands, for telling it exactly what it missed. */
export interface ReaderPosition {
  /** The reader's byte position in each stream, when it knows it. */
  position?: StreamPositions | undefined;
  /** Byte offsets the reader asked to start from: output before them is not missed. */
  from?: Partial<StreamPositions> | undefined;
}

/**
 * Output bytes per entry that the entry bound allows for: chunks that average this much or more are
 * bounded by bytes alone. At about 40 bytes of bookkeeping an entry (log-store.ts), the bound keeps
 * the bookkeeping under the byte budget, so a log never holds much more than twice `retentionBytes`.
 */
const ENTRY_BUDGET_BYTES = 64;
/** Even a tiny log keeps this many entries. */
const MIN_ENTRIES = 1024;
/** Recently dropped entries whose stream positions are remembered, for exact notices on resume by id alone. */
const DROPPED_INDEX_SIZE = 4096;

interface Pin {
  cursor: number;
}

/** How much a log keeps while pinned readers read (see the top of this file). */
export interface ReadingWindow {
  unreadBytes: number;
  sentBytes: number;
}

export class OutputLog {
  readonly retentionBytes: number;
  readonly maxEntries: number;
  /** Called when a pinned reader holds back dropping and the log is over budget (true), or no longer (false). */
  onPressure: ((overBudget: boolean) => void) | undefined;

  readonly #store = new LogStore();
  #droppedEvents = 0;
  #droppedStreamBytes: StreamPositions = { stdout: 0, stderr: 0 };
  /** [seq, stdout end, stderr end] by seq % DROPPED_INDEX_SIZE; made on the first drop (most logs never drop). */
  #droppedIndex: Float64Array | undefined;
  #closed = false;
  #reading: ReadingWindow | undefined;
  #overBudget = false;
  #waiters = new Set<() => void>();
  #pins = new Set<Pin>();
  #listeners = new Set<(entry: LogEntry) => void>();

  constructor(retentionBytes: number) {
    this.retentionBytes = retentionBytes;
    this.maxEntries = Math.max(MIN_ENTRIES, Math.floor(retentionBytes / ENTRY_BUDGET_BYTES));
  }

  get lastSeq(): number {
    return this.#store.next - 1;
  }
  /** Seq of the oldest retained entry (lastSeq + 1 when none is). */
  get firstSeq(): number {
    return this.#store.first;
  }
  get closed(): boolean {
    return this.#closed;
  }
  /** Output bytes retained (what `retentionBytes` bounds). */
  get retainedBytes(): number {
    return this.#store.dataBytes;
  }
  get retainedEntries(): number {
    return this.#store.count;
  }
  /** Memory the log holds: the retained bytes, their bookkeeping and the index of dropped entries. */
  get footprintBytes(): number {
    return this.#store.memoryBytes + (this.#droppedIndex?.byteLength ?? 0);
  }
  get droppedEvents(): number {
    return this.#droppedEvents;
  }
  streamBytes(stream: OutputStream): number {
    return this.#store.totals[stream];
  }
  droppedBytes(stream: OutputStream): number {
    return this.#droppedStreamBytes[stream];
  }

  appendOutput(stream: OutputStream, data: Buffer): OutputEntry {
    if (this.#closed) throw new Error("output log is closed");
    const entry = this.#store.appendOutput(stream, data, Date.now());
    this.#appended(entry);
    return entry;
  }

  appendStatus(fields: StatusFields): StatusEntry {
    return this.#appendOther({ kind: "status", seq: 0, time: Date.now(), ...fields });
  }

  appendError(error: string, code?: string): ErrorEntry {
    const entry: ErrorEntry = { kind: "error", seq: 0, time: Date.now(), error };
    if (code !== undefined) entry.code = code;
    return this.#appendOther(entry);
  }

  appendRecord(type: string, json: Buffer): RecordEntry {
    return this.#appendOther({ kind: "record", seq: 0, time: Date.now(), type, json });
  }

  /** No more entries will come; readers finish once they have read everything. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#wake();
  }

  /** Synchronous notification of every appended entry (buffered exec results use it). */
  subscribe(listener: (entry: LogEntry) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Entries after `afterSeq`, up to about `maxBytes` of data. When some of them were dropped, a
   * truncated notice comes first, counting the output the reader wanted and will not get.
   */
  read(afterSeq: number, maxBytes: number, reader: ReaderPosition = {}): { notice?: TruncatedNotice; entries: LogEntry[] } {
    const store = this.#store;
    const first = store.first;
    const notice = afterSeq + 1 < first ? this.#notice(afterSeq, reader) : undefined;
    const entries: LogEntry[] = [];
    let bytes = 0;
    for (let seq = Math.max(first, afterSeq + 1); seq < store.next; seq++) {
      entries.push(store.at(seq));
      bytes += store.dataLength(seq);
      if (bytes >= maxBytes) break;
    }
    return notice ? { notice, entries } : { entries };
  }

  /** Each stream's byte position where the retained output begins. */
  retainedStart(): StreamPositions {
    const store = this.#store;
    return store.count > 0 ? store.positionBefore(store.first) : { ...store.totals };
  }

  /** Each stream's byte position after entry `seq`, while the log still knows it (0: the start). */
  positionAfter(seq: number): StreamPositions | undefined {
    if (seq === 0) return { stdout: 0, stderr: 0 };
    if (seq >= this.#store.first && seq < this.#store.next) return this.#store.positionAfter(seq);
    return this.#droppedPositionOf(seq);
  }

  /** Resolves once there is an entry after `afterSeq`, or the log is closed. */
  waitFor(afterSeq: number, signal?: AbortSignal): Promise<void> {
    if (this.lastSeq > afterSeq || this.#closed || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#waiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.#waiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Retained output per stream, oldest first (for the logs route). */
  retainedOutput(stream: OutputStream): Buffer[] {
    const out: Buffer[] = [];
    for (let seq = this.#store.first; seq < this.#store.next; seq++) {
      const entry = this.#store.at(seq);
      if (entry.kind === "output" && entry.stream === stream) out.push(entry.data);
    }
    return out;
  }

  /** Bytes of `stream` that are no longer retained in front of the first retained chunk. */
  leadingDroppedBytes(stream: OutputStream): number {
    return this.retainedStart()[stream];
  }

  pin(pin: Pin): void {
    this.#pins.add(pin);
  }

  /** Keeps the log within a reading window while pinned readers read (undefined: within its retention). */
  setReading(window: ReadingWindow | undefined): void {
    this.#reading = window;
    this.#trim();
  }

  unpin(pin: Pin): void {
    if (this.#pins.delete(pin)) this.#trim();
  }

  /** A pinned reader moved on: drop what it no longer needs. */
  released(): void {
    this.#trim();
  }

  #appendOther<E extends StatusEntry | ErrorEntry | RecordEntry>(entry: E): E {
    if (this.#closed) throw new Error("output log is closed");
    this.#store.appendOther(entry);
    this.#appended(entry);
    return entry;
  }

  #appended(entry: LogEntry): void {
    for (const listener of this.#listeners) listener(entry);
    this.#trim();
    this.#wake();
  }

  #notice(afterSeq: number, reader: ReaderPosition): TruncatedNotice | undefined {
    const first = this.#store.first;
    const start = this.retainedStart();
    const known = reader.position ?? this.positionAfter(afterSeq) ?? { stdout: 0, stderr: 0 };
    const from = reader.from ?? {};
    const stdoutDropped = Math.max(0, start.stdout - Math.max(known.stdout, from.stdout ?? 0));
    const stderrDropped = Math.max(0, start.stderr - Math.max(known.stderr, from.stderr ?? 0));
    // A reader that said which bytes it has is told only about output it is missing.
    const askedForBytes = from.stdout !== undefined || from.stderr !== undefined;
    if (askedForBytes && stdoutDropped === 0 && stderrDropped === 0) return undefined;
    return {
      kind: "truncated",
      seq: first - 1,
      time: Date.now(),
      droppedEvents: first - 1 - afterSeq,
      droppedBytes: stdoutDropped + stderrDropped,
      stdoutDropped,
      stderrDropped,
    };
  }

  /** Over the retention, or (with a reading window) keeping more read output than the window's. */
  #overLimits(minPinned: number): boolean {
    const store = this.#store;
    if (store.dataBytes > this.retentionBytes || store.count > this.maxEntries) return true;
    return this.#reading !== undefined && this.#bytesUpTo(minPinned) > this.#reading.sentBytes;
  }

  /** Output bytes of the retained entries up to `seq` (those every pinned reader has read). */
  #bytesUpTo(seq: number): number {
    const store = this.#store;
    if (store.count === 0 || seq < store.first) return 0;
    const start = this.retainedStart();
    const end = store.positionAfter(Math.min(seq, store.next - 1));
    return end.stdout - start.stdout + end.stderr - start.stderr;
  }

  #trim(): void {
    let minPinned = Infinity;
    for (const pin of this.#pins) minPinned = Math.min(minPinned, pin.cursor);
    let heldByPin = false;
    const store = this.#store;
    // The newest entry always stays, so a late reader still learns how the process ended.
    while (store.count > 1 && this.#overLimits(minPinned)) {
      if (store.first > minPinned) {
        heldByPin = true;
        break;
      }
      this.#drop();
    }
    // Unread output past the reading window holds the producer back too.
    const reading = this.#reading;
    if (reading && !heldByPin) heldByPin = store.dataBytes - this.#bytesUpTo(minPinned) > reading.unreadBytes;
    // Pressure only when unread output of a pinned reader is what keeps the log over budget.
    if (heldByPin !== this.#overBudget) {
      this.#overBudget = heldByPin;
      this.onPressure?.(heldByPin);
    }
  }

  #drop(): void {
    const store = this.#store;
    const seq = store.first;
    const stream = store.streamOf(seq);
    if (stream !== undefined) this.#droppedStreamBytes[stream] += store.dataLength(seq);
    const ends = store.positionAfter(seq);
    const slot = (seq % DROPPED_INDEX_SIZE) * 3;
    const index = (this.#droppedIndex ??= new Float64Array(DROPPED_INDEX_SIZE * 3));
    index[slot] = seq;
    index[slot + 1] = ends.stdout;
    index[slot + 2] = ends.stderr;
    this.#droppedEvents++;
    store.shift();
  }

  #droppedPositionOf(seq: number): StreamPositions | undefined {
    const slot = (seq % DROPPED_INDEX_SIZE) * 3;
    const index = this.#droppedIndex;
    return index !== undefined && index[slot] === seq ? { stdout: index[slot + 1]!, stderr: index[slot + 2]! } : undefined;
  }

  #wake(): void {
    if (this.#waiters.size === 0) return;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
