/**
 * The readers of an exec's stream, and what happens when the last one goes away before the end.
 *
 * Readers are pinned: the command runs at their pace, like a process writing into a pipe. While
 * they read, the log is kept to a reading window (READING_WINDOW): a small one lets output buffers
 * die young (the GC stays cheap, and the server small, which every fork pays for), while what was
 * sent lately stays for a reader that reconnects needing it again.
 *
 * A reader whose connection broke is expected back (a client resuming its stream), so for `graceMs`
 * the exec waits for it: the log keeps everything it holds — including what was sent but may never
 * have arrived — and the command writes on until the log holds its full retention, then blocks on
 * its pipe, as with a pipe nobody reads. A reader that comes back within the grace resumes with
 * nothing lost. After it, the log falls back to its ring: output flows on, the oldest is dropped,
 * and a late reader gets a truncated notice. Killing the command ends the wait at once: what it
 * writes while dying need not be kept.
 */
import { LogReader, type ReaderOptions } from "./log-reader.ts";
import type { OutputLog, ReadingWindow } from "./output-log.ts";

/**
 * While readers read: the command is held back once 1 MiB waits unread, and the last 2 MiB sent
 * stay. Sent output is "in flight" until the reader has it — in socket buffers and proxies on the
 * way — and a reader whose connection broke asks for it again. 2 MiB is the allowance for such
 * buffers; more in flight than that is told to the reader as truncated, never lost silently.
 */
const READING_WINDOW: ReadingWindow = { unreadBytes: 1024 * 1024, sentBytes: 2 * 1024 * 1024 };

export class ExecReaders {
  readonly #log: OutputLog;
  readonly #graceMs: number;
  #open = 0;
  /** While waiting for a reader: a pin before the oldest retained entry, so nothing is dropped. */
  #hold: { cursor: number } | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(log: OutputLog, graceMs: number) {
    this.#log = log;
    this.#graceMs = graceMs;
  }

  /** Whether the exec is waiting for a reader to come back. */
  get waiting(): boolean {
    return this.#hold !== undefined;
  }

  /** A reader starts (or comes back) after `afterSeq`, from the given byte offsets. */
  open(afterSeq: number, from?: ReaderOptions["from"]): LogReader {
    const reader = new LogReader(this.#log, afterSeq, { pin: true, from });
    if (this.#open++ === 0) this.#log.setReading(READING_WINDOW);
    this.stopWaiting();
    return reader;
  }

  /** A reader is done: it read to the end, or it went away (`disconnected`) and may come back. */
  close(reader: LogReader, disconnected: boolean): void {
    if (--this.#open === 0) {
      if (disconnected && !reader.done && !this.#log.closed) this.#wait();
      this.#log.setReading(undefined);
    }
    reader.unpin();
  }

  /** Stops waiting for a reader: the log falls back to its ring. */
  stopWaiting(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const hold = this.#hold;
    this.#hold = undefined;
    if (hold) this.#log.unpin(hold);
  }

  #wait(): void {
    if (this.#hold) return;
    this.#hold = { cursor: this.#log.firstSeq - 1 };
    this.#log.pin(this.#hold);
    this.#timer = setTimeout(() => this.stopWaiting(), this.#graceMs);
    this.#timer.unref();
  }
}
