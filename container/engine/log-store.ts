/**
 * Where a process log keeps its entries: a ring of columns (kind, time, each stream's byte position,
 * where the data lies) rather than an object per entry, so that an entry costs about 40 bytes of
 * bookkeeping whatever its size. Many tiny chunks (an interleaved stdout/stderr loop writes one per
 * line) then cost little beyond their bytes, and the log can afford to keep many of them.
 *
 * Chunks of up to SMALL_CHUNK_BYTES are copied into shared slabs; bigger ones are kept as they are
 * (copied only when they are a small view of a much larger buffer). Entries are handed out as
 * objects made on demand: they live as long as a read, never as long as the log.
 *
 * The store only stores; what to keep and when to drop is the log's policy (output-log.ts).
 */
import type { StatusFields } from "../../protocol/events.ts";
import type { OutputStream } from "../../protocol/process.ts";

interface EntryBase {
  seq: number;
  /** Epoch ms when the entry was appended. */
  time: number;
}
export interface OutputEntry extends EntryBase {
  kind: "output";
  stream: OutputStream;
  data: Buffer;
  /** Byte offset of the first byte of `data` within its stream. */
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
/** An entry that is not output: kept as the object it is, in the slot's reference. */
type OtherEntry = StatusEntry | ErrorEntry | RecordEntry;
export type LogEntry = OutputEntry | OtherEntry;

/** Bytes of each stream: how far a stream has come, or how far a reader has read. */
export interface StreamPositions {
  stdout: number;
  stderr: number;
}

/**
 * Chunks up to this size are copied into a slab. A pipe read of a few bytes lands in its own
 * malloc'd block (carved from a 64 KiB read buffer); kept in a log, such blocks fragment the heap
 * and the server's resident size — which every fork pays for — grows with the number of logs.
 */
const SMALL_CHUNK_BYTES = 4096;
/**
 * Slabs start small and double up to MAX_SLAB_BYTES, so a log with little output (most execs write
 * a line or two, and finished ones are kept a while) holds little more than its bytes.
 */
const FIRST_SLAB_BYTES = 256;
const MAX_SLAB_BYTES = 64 * 1024;
/** Bytes of bookkeeping per entry slot: kind 1, time 8, two positions 16, start and length 8, a reference 8. */
const ENTRY_SLOT_BYTES = 41;
const INITIAL_CAPACITY = 8;

const STDOUT = 0;
const STDERR = 1;
const OTHER = 2;

export class LogStore {
  /** Seq of the first stored entry (equals `next` when the store is empty). */
  #first = 1;
  #next = 1;
  #capacity = INITIAL_CAPACITY;
  #kinds = new Uint8Array(INITIAL_CAPACITY);
  #times = new Float64Array(INITIAL_CAPACITY);
  /** Each stream's byte position after the entry. */
  #stdoutEnds = new Float64Array(INITIAL_CAPACITY);
  #stderrEnds = new Float64Array(INITIAL_CAPACITY);
  #starts = new Uint32Array(INITIAL_CAPACITY);
  #lengths = new Uint32Array(INITIAL_CAPACITY);
  /** The buffer holding an output entry's bytes (its own, or a shared slab), or another entry. */
  #refs: (Buffer | OtherEntry | undefined)[] = new Array(INITIAL_CAPACITY).fill(undefined);
  #totals: StreamPositions = { stdout: 0, stderr: 0 };
  #dataBytes = 0;
  #slab: Buffer | undefined;
  #slabUsed = 0;
  #slabBytes = 0;

  /** Seq of the first stored entry; `next` when empty. */
  get first(): number {
    return this.#first;
  }
  /** Seq the next entry will get. */
  get next(): number {
    return this.#next;
  }
  get count(): number {
    return this.#next - this.#first;
  }
  /** Bytes of the stored entries (output, and records' JSON). */
  get dataBytes(): number {
    return this.#dataBytes;
  }
  /** Memory held: the stored bytes, the current slab's spare room and the bookkeeping slots. */
  get memoryBytes(): number {
    const spare = this.#slab ? this.#slab.length - this.#slabUsed : 0;
    return this.#dataBytes + spare + this.#capacity * ENTRY_SLOT_BYTES;
  }
  /** Bytes each stream has written in all. */
  get totals(): Readonly<StreamPositions> {
    return this.#totals;
  }

  appendOutput(stream: OutputStream, data: Buffer, time: number): OutputEntry {
    const slot = this.#claim();
    const offset = this.#totals[stream];
    this.#totals[stream] += data.length;
    this.#dataBytes += data.length;
    this.#kinds[slot] = stream === "stdout" ? STDOUT : STDERR;
    this.#times[slot] = time;
    this.#stdoutEnds[slot] = this.#totals.stdout;
    this.#stderrEnds[slot] = this.#totals.stderr;
    this.#lengths[slot] = data.length;
    if (data.length <= SMALL_CHUNK_BYTES) {
      const slab = this.#slabFor(data.length);
      data.copy(slab, this.#slabUsed);
      this.#refs[slot] = slab;
      this.#starts[slot] = this.#slabUsed;
      this.#slabUsed += data.length;
      data = slab.subarray(this.#starts[slot], this.#slabUsed);
    } else {
      // A chunk that is a small view of a much larger buffer would keep all of it alive: copy it.
      if (data.byteLength * 2 < data.buffer.byteLength) data = Buffer.from(data);
      this.#refs[slot] = data;
      this.#starts[slot] = 0;
    }
    return { kind: "output", seq: this.#next - 1, time, stream, data, offset };
  }

  /** Stores an entry that is not output, giving it its seq. A record's JSON counts as stored bytes. */
  appendOther<E extends OtherEntry>(entry: E): E {
    const slot = this.#claim();
    entry.seq = this.#next - 1;
    const length = entry.kind === "record" ? entry.json.length : 0;
    this.#dataBytes += length;
    this.#kinds[slot] = OTHER;
    this.#times[slot] = entry.time;
    this.#stdoutEnds[slot] = this.#totals.stdout;
    this.#stderrEnds[slot] = this.#totals.stderr;
    this.#lengths[slot] = length;
    this.#refs[slot] = entry;
    return entry;
  }

  /** The stored entry `seq` (first ≤ seq < next). */
  at(seq: number): LogEntry {
    const slot = seq % this.#capacity;
    const ref = this.#refs[slot]!;
    const kind = this.#kinds[slot]!;
    if (kind === OTHER) return ref as OtherEntry;
    const buffer = ref as Buffer;
    const start = this.#starts[slot]!;
    const length = this.#lengths[slot]!;
    const data = start === 0 && length === buffer.length ? buffer : buffer.subarray(start, start + length);
    const stream: OutputStream = kind === STDOUT ? "stdout" : "stderr";
    const end = kind === STDOUT ? this.#stdoutEnds[slot]! : this.#stderrEnds[slot]!;
    return { kind: "output", seq, time: this.#times[slot]!, stream, data, offset: end - length };
  }

  /** Stored bytes of entry `seq` (output, or a record's JSON; 0 for a status or error). */
  dataLength(seq: number): number {
    return this.#lengths[seq % this.#capacity]!;
  }

  /** The stream of output entry `seq`; undefined for a status or error. */
  streamOf(seq: number): OutputStream | undefined {
    const kind = this.#kinds[seq % this.#capacity];
    return kind === STDOUT ? "stdout" : kind === STDERR ? "stderr" : undefined;
  }

  /** Each stream's byte position just after entry `seq`. */
  positionAfter(seq: number): StreamPositions {
    const slot = seq % this.#capacity;
    return { stdout: this.#stdoutEnds[slot]!, stderr: this.#stderrEnds[slot]! };
  }

  /** Each stream's byte position just before entry `seq`. */
  positionBefore(seq: number): StreamPositions {
    const slot = seq % this.#capacity;
    const length = this.#lengths[slot]!;
    const kind = this.#kinds[slot]!;
    return {
      stdout: this.#stdoutEnds[slot]! - (kind === STDOUT ? length : 0),
      stderr: this.#stderrEnds[slot]! - (kind === STDERR ? length : 0),
    };
  }

  /** Drops the first entry; its bytes are freed once nothing else refers to their buffer. */
  shift(): void {
    const slot = this.#first % this.#capacity;
    this.#dataBytes -= this.#lengths[slot]!;
    this.#refs[slot] = undefined;
    this.#first++;
  }

  #claim(): number {
    if (this.count === this.#capacity) this.#grow();
    return this.#next++ % this.#capacity;
  }

  /** Doubles the columns, keeping every stored entry at its seq's slot in the new size. */
  #grow(): void {
    const capacity = this.#capacity * 2;
    const kinds = new Uint8Array(capacity);
    const times = new Float64Array(capacity);
    const stdoutEnds = new Float64Array(capacity);
    const stderrEnds = new Float64Array(capacity);
    const starts = new Uint32Array(capacity);
    const lengths = new Uint32Array(capacity);
    const refs: (Buffer | OtherEntry | undefined)[] = new Array(capacity).fill(undefined);
    for (let seq = this.#first; seq < this.#next; seq++) {
      const from = seq % this.#capacity;
      const to = seq % capacity;
      kinds[to] = this.#kinds[from]!;
      times[to] = this.#times[from]!;
      stdoutEnds[to] = this.#stdoutEnds[from]!;
      stderrEnds[to] = this.#stderrEnds[from]!;
      starts[to] = this.#starts[from]!;
      lengths[to] = this.#lengths[from]!;
      refs[to] = this.#refs[from];
    }
    this.#capacity = capacity;
    this.#kinds = kinds;
    this.#times = times;
    this.#stdoutEnds = stdoutEnds;
    this.#stderrEnds = stderrEnds;
    this.#starts = starts;
    this.#lengths = lengths;
    this.#refs = refs;
  }

  /** A slab with room for `length` more bytes: the current one, or a new one twice its size. */
  #slabFor(length: number): Buffer {
    if (this.#slab && this.#slab.length - this.#slabUsed >= length) return this.#slab;
    this.#slabBytes = Math.min(MAX_SLAB_BYTES, Math.max(FIRST_SLAB_BYTES, length, this.#slabBytes * 2));
    this.#slab = Buffer.allocUnsafeSlow(this.#slabBytes);
    this.#slabUsed = 0;
    return this.#slab;
  }
}
