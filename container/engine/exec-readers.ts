/**
 * The readers of an exec's stream, and what happens when the last one goes away before the end.
 *
 * Readers are pinned: the command runs at their pace, like a process writing into a pipe. A reader
 * whose connection broke is expected back (a client resuming its stream), so for `graceMs` the exec
 * waits for it: the log keeps everything it holds — including what was sent but may never have
 * arrived — and the command keeps the backpressure it had, blocking on its pipe once the log is full.
 * A reader that comes back within the window resumes with nothing lost. After it, the log falls
 * back to its ring: output flows on, the oldest is dropped, and a late reader gets a truncated
 * notice. Killing the command ends the wait at once: what it writes while dying need not be kept.
 */
import { LogReader, type ReaderOptions } from "./log-reader.ts";
import type { OutputLog } from "./output-log.ts";

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
    this.#open++;
    this.stopWaiting();
    return reader;
  }

  /** A reader is done: it read to the end, or it went away (`disconnected`) and may come back. */
  close(reader: LogReader, disconnected: boolean): void {
    this.#open--;
    if (disconnected && this.#open === 0 && !reader.done && !this.#log.closed) this.#wait();
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
