/**
 * A reader's position in one process log. Readers pull at their own pace (an SSE writer takes a
 * batch, writes it, waits for the socket to drain, takes the next), so a slow reader never makes the
 * server queue output for it. Unpinned readers that fall behind the ring get one truncated notice,
 * then continue with what is retained; a pinned reader holds the producer back instead.
 *
 * A reader can start inside an event: given byte offsets per stream (`from`), output before them is
 * left out, and an entry that straddles an offset is handed out from that byte on (same seq, its
 * `offset` moved). That is how a stream cut in the middle of an event resumes exactly.
 */
import type { ResumePoint } from "../../protocol/resume.ts";
import type { LogEntry, OutputEntry, OutputLog, StreamPositions, TruncatedNotice } from "./output-log.ts";

export type LogItem = LogEntry | TruncatedNotice;

export interface ReaderOptions {
  /** Hold the producer back instead of letting unread output go. */
  pin?: boolean;
  /** Byte offsets per stream to start from (output before them is not handed out). */
  from?: Partial<StreamPositions> | undefined;
}

/** Where a resume point (protocol/resume.ts) starts a reader: after its event id, from its byte offsets. */
export function readerStart(point: ResumePoint): { afterSeq: number; from: Partial<StreamPositions> } {
  return { afterSeq: point.since ?? 0, from: { stdout: point.stdoutOffset, stderr: point.stderrOffset } };
}

export class LogReader {
  readonly log: OutputLog;
  /** Seq of the last entry handed out (or passed over). */
  cursor: number;
  /** Byte position in each stream after the cursor, when known. */
  #position: StreamPositions | undefined;
  #from: Partial<StreamPositions> | undefined;
  #pinned = false;

  constructor(log: OutputLog, afterSeq: number, options: ReaderOptions = {}) {
    this.log = log;
    this.cursor = Math.max(0, Math.min(afterSeq, log.lastSeq));
    this.#position = log.positionAfter(this.cursor);
    const from = options.from;
    if (from && (from.stdout !== undefined || from.stderr !== undefined)) this.#from = { ...from };
    if (options.pin) {
      this.#pinned = true;
      log.pin(this);
    }
  }

  /** The next batch (about `maxBytes` of output at most); empty when nothing new is there yet. */
  take(maxBytes: number): LogItem[] {
    for (;;) {
      const { notice, entries } = this.log.read(this.cursor, maxBytes, { position: this.#position, from: this.#from });
      const items: LogItem[] = [];
      if (this.cursor + 1 < this.log.firstSeq) {
        // Dropped before this reader got to them: skip to what is retained (with a notice, unless
        // the reader's offsets show it had all their output).
        if (notice) items.push(notice);
        this.cursor = this.log.firstSeq - 1;
      }
      for (const entry of entries) {
        const item = entry.kind === "output" ? this.#fromOffset(entry) : entry;
        if (item) items.push(item);
        this.cursor = entry.seq;
      }
      if (entries.length > 0) {
        this.#position = this.log.positionAfter(this.cursor);
        if (this.#pinned) this.log.released();
      }
      // A batch that lay wholly before the asked-for offsets gave nothing: read on.
      if (items.length > 0 || entries.length === 0) return items;
    }
  }

  /** Everything there will ever be has been taken. */
  get done(): boolean {
    return this.log.closed && this.cursor >= this.log.lastSeq;
  }

  wait(signal?: AbortSignal): Promise<void> {
    return this.log.waitFor(this.cursor, signal);
  }

  /** Stop holding the producer back (the reader went away). */
  unpin(): void {
    if (!this.#pinned) return;
    this.#pinned = false;
    this.log.unpin(this);
  }

  /** The entry from the reader's start offset on: whole, cut at the front, or nothing. */
  #fromOffset(entry: OutputEntry): OutputEntry | undefined {
    const start = this.#from?.[entry.stream];
    if (start === undefined || start <= entry.offset) return entry;
    const skip = start - entry.offset;
    if (skip >= entry.data.length) return undefined;
    return { ...entry, data: entry.data.subarray(skip), offset: start };
  }
}
