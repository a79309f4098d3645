/**
 * One ordered log per process: output chunks and status changes, each with a `seq` (from 1), output
 * chunks with their byte offset in their own stream. Retention is a bounded ring: when the retained
 * cost passes `retentionBytes`, the oldest entries are dropped and counted, so memory never grows
 * with the amount of output.
 *
 * A reader may pin the log (execute/stream does): entries it has not read yet are not dropped;
 * instead the log reports pressure and the producer pauses the pipes until the reader catches up.
 */
import type { StatusFields } from "../../protocol/events.ts";
import type { OutputStream } from "../../protocol/process.ts";

interface EntryBase {
  seq: number;
  /** Epoch ms when the entry was appended. */
  time: number;
  /** Output bytes (both streams) written up to and including this entry. */
  endBytes: number;
}
export interface OutputEntry extends EntryBase {
  kind: "output";
  stream: OutputStream;
  data: Buffer;
  offset: number;
}
export interface StatusEntry extends EntryBase, StatusFields {
  kind: "status";
}
export interface ErrorEntry extends EntryBase {
  kind: "error";
  error: string;
  code?: string;
}
/**
 * A structured event of an engine that is not a process (a code cell's result, its start or end):
 * the event's fields as JSON, kept as bytes so retention counts what it weighs.
 */
export interface RecordEntry extends EntryBase {
  kind: "record";
  /** The event type on the wire. */
  type: string;
  /** The event's other fields, a JSON object. */
  json: Buffer;
}
export type LogEntry = OutputEntry | StatusEntry | ErrorEntry | RecordEntry;

/** What a reader gets instead of entries that were dropped before it read them. */
export interface TruncatedNotice {
  kind: "truncated";
  time: number;
  droppedEvents: number;
  droppedBytes: number;
}

/** Bookkeeping cost of one entry beyond its data, so many tiny chunks are bounded too. */
const ENTRY_OVERHEAD = 128;
/** Recently dropped entries whose byte position is remembered, for exact `droppedBytes` on resume. */
const DROPPED_INDEX_SIZE = 4096;
/**
 * Chunks up to this size are copied into the log. A pipe read of a few bytes lands in its own
 * malloc'd block (carved from a 64 KiB read buffer); kept in a log, such blocks fragment the heap
 * and the server's resident size — which every fork pays for — grows with the number of logs.
 */
const SMALL_CHUNK_BYTES = 4096;

interface Pin {
  cursor: number;
}

export class OutputLog {
  readonly retentionBytes: number;
  /** Called when a pinned reader holds back dropping and the log is over budget (true), or no longer (false). */
  onPressure: ((overBudget: boolean) => void) | undefined;

  /** Slots before #head are dropped entries, cleared so their buffers can be freed at once. */
  #entries: (LogEntry | undefined)[] = [];
  #head = 0;
  #nextSeq = 1;
  #cost = 0;
  #totalBytes = 0;
  #streamBytes: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  #droppedEvents = 0;
  #droppedStreamBytes: Record<OutputStream, number> = { stdout: 0, stderr: 0 };
  /** [seq, endBytes] pairs by seq % DROPPED_INDEX_SIZE; made on the first drop (most logs never drop). */
  #droppedIndex: Float64Array | undefined;
  #closed = false;
  #overBudget = false;
  #waiters = new Set<() => void>();
  #pins = new Set<Pin>();
  #listeners = new Set<(entry: LogEntry) => void>();

  constructor(retentionBytes: number) {
    this.retentionBytes = retentionBytes;
  }

  get lastSeq(): number {
    return this.#nextSeq - 1;
  }
  get closed(): boolean {
    return this.#closed;
  }
  /** What the retained entries cost: their bytes plus a fixed overhead each (what retention bounds). */
  get retainedBytes(): number {
    return this.#cost;
  }
  /** Memory the log holds: the retained entries and its index of dropped ones. */
  get footprintBytes(): number {
    return this.#cost + (this.#droppedIndex?.byteLength ?? 0);
  }
  get droppedEvents(): number {
    return this.#droppedEvents;
  }
  streamBytes(stream: OutputStream): number {
    return this.#streamBytes[stream];
  }
  droppedBytes(stream: OutputStream): number {
    return this.#droppedStreamBytes[stream];
  }

  appendOutput(stream: OutputStream, data: Buffer): OutputEntry {
    // A chunk may be a view into a larger buffer: copy it so retention counts real memory. Small
    // ones are always copied (see SMALL_CHUNK_BYTES).
    if (data.byteLength <= SMALL_CHUNK_BYTES || data.byteLength * 2 < data.buffer.byteLength) data = Buffer.from(data);
    const offset = this.#streamBytes[stream];
    this.#streamBytes[stream] += data.length;
    this.#totalBytes += data.length;
    const entry: OutputEntry = { kind: "output", seq: 0, time: Date.now(), endBytes: this.#totalBytes, stream, data, offset };
    this.#push(entry, data.length);
    return entry;
  }

  appendStatus(fields: StatusFields): StatusEntry {
    const entry: StatusEntry = { kind: "status", seq: 0, time: Date.now(), endBytes: this.#totalBytes, ...fields };
    this.#push(entry, 0);
    return entry;
  }

  appendError(error: string, code?: string): ErrorEntry {
    const entry: ErrorEntry = { kind: "error", seq: 0, time: Date.now(), endBytes: this.#totalBytes, error };
    if (code !== undefined) entry.code = code;
    this.#push(entry, 0);
    return entry;
  }

  appendRecord(type: string, json: Buffer): RecordEntry {
    const entry: RecordEntry = { kind: "record", seq: 0, time: Date.now(), endBytes: this.#totalBytes, type, json };
    this.#push(entry, json.length);
    return entry;
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
   * truncated notice comes first. `knownEndBytes` is the reader's byte position, when it has one.
   */
  read(afterSeq: number, maxBytes: number, knownEndBytes?: number): { notice?: TruncatedNotice; entries: LogEntry[] } {
    const first = this.#entries[this.#head];
    const firstSeq = first ? first.seq : this.#nextSeq;
    let notice: TruncatedNotice | undefined;
    if (afterSeq + 1 < firstSeq) {
      const startBytes = first ? first.endBytes - (first.kind === "output" ? first.data.length : 0) : this.#totalBytes;
      const fromBytes = afterSeq === 0 ? 0 : (knownEndBytes ?? this.#droppedEndOf(afterSeq) ?? 0);
      notice = {
        kind: "truncated",
        time: Date.now(),
        droppedEvents: firstSeq - 1 - afterSeq,
        droppedBytes: Math.max(0, startBytes - fromBytes),
      };
    }
    const entries: LogEntry[] = [];
    let bytes = 0;
    for (let i = this.#head + Math.max(0, afterSeq + 1 - firstSeq); i < this.#entries.length; i++) {
      const entry = this.#entries[i]!;
      entries.push(entry);
      if (entry.kind === "output") bytes += entry.data.length;
      else if (entry.kind === "record") bytes += entry.json.length;
      if (bytes >= maxBytes) break;
    }
    return notice ? { notice, entries } : { entries };
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
    for (let i = this.#head; i < this.#entries.length; i++) {
      const entry = this.#entries[i]!;
      if (entry.kind === "output" && entry.stream === stream) out.push(entry.data);
    }
    return out;
  }

  /** Bytes of `stream` that are no longer retained in front of the first retained chunk. */
  leadingDroppedBytes(stream: OutputStream): number {
    for (let i = this.#head; i < this.#entries.length; i++) {
      const entry = this.#entries[i]!;
      if (entry.kind === "output" && entry.stream === stream) return entry.offset;
    }
    return this.#streamBytes[stream];
  }

  pin(pin: Pin): void {
    this.#pins.add(pin);
  }

  unpin(pin: Pin): void {
    if (this.#pins.delete(pin)) this.#trim();
  }

  /** A pinned reader moved on: drop what it no longer needs. */
  released(): void {
    this.#trim();
  }

  #push(entry: LogEntry, dataBytes: number): void {
    if (this.#closed) throw new Error("output log is closed");
    entry.seq = this.#nextSeq++;
    this.#entries.push(entry);
    this.#cost += dataBytes + ENTRY_OVERHEAD;
    for (const listener of this.#listeners) listener(entry);
    this.#trim();
    this.#wake();
  }

  #trim(): void {
    let minPinned = Infinity;
    for (const pin of this.#pins) minPinned = Math.min(minPinned, pin.cursor);
    let heldByPin = false;
    // The newest entry always stays, so a late reader still learns how the process ended.
    while (this.#cost > this.retentionBytes && this.#head < this.#entries.length - 1) {
      const entry = this.#entries[this.#head]!;
      if (entry.seq > minPinned) {
        heldByPin = true;
        break;
      }
      this.#drop(entry);
      this.#entries[this.#head++] = undefined;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
    // Pressure only when unread output of a pinned reader is what keeps the log over budget.
    if (heldByPin !== this.#overBudget) {
      this.#overBudget = heldByPin;
      this.onPressure?.(heldByPin);
    }
  }

  #drop(entry: LogEntry): void {
    const dataBytes = entry.kind === "output" ? entry.data.length : entry.kind === "record" ? entry.json.length : 0;
    this.#cost -= dataBytes + ENTRY_OVERHEAD;
    this.#droppedEvents++;
    if (entry.kind === "output") this.#droppedStreamBytes[entry.stream] += dataBytes;
    const slot = (entry.seq % DROPPED_INDEX_SIZE) * 2;
    const index = (this.#droppedIndex ??= new Float64Array(DROPPED_INDEX_SIZE * 2));
    index[slot] = entry.seq;
    index[slot + 1] = entry.endBytes;
  }

  #droppedEndOf(seq: number): number | undefined {
    const slot = (seq % DROPPED_INDEX_SIZE) * 2;
    const index = this.#droppedIndex;
    return index !== undefined && index[slot] === seq ? index[slot + 1] : undefined;
  }

  #wake(): void {
    if (this.#waiters.size === 0) return;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
