/**
 * A reader's position in one process log. Readers pull at their own pace (an SSE writer takes a
 * batch, writes it, waits for the socket to drain, takes the next), so a slow reader never makes the
 * server queue output for it. Unpinned readers that fall behind the ring get one truncated notice,
 * then continue with what is retained; a pinned reader holds the producer back instead.
 */
import type { LogEntry, OutputLog, TruncatedNotice } from "./output-log.ts";

export type LogItem = LogEntry | TruncatedNotice;

export class LogReader {
  readonly log: OutputLog;
  /** Seq of the last entry handed out. */
  cursor: number;
  #endBytes: number | undefined;
  #pinned = false;

  constructor(log: OutputLog, afterSeq: number, options: { pin?: boolean } = {}) {
    this.log = log;
    this.cursor = Math.max(0, Math.min(afterSeq, log.lastSeq));
    if (this.cursor === 0) this.#endBytes = 0;
    if (options.pin) {
      this.#pinned = true;
      log.pin(this);
    }
  }

  /** The next batch (about `maxBytes` of output at most); empty when nothing new is there yet. */
  take(maxBytes: number): LogItem[] {
    const { notice, entries } = this.log.read(this.cursor, maxBytes, this.#endBytes);
    const items: LogItem[] = notice ? [notice, ...entries] : entries;
    const last = entries.at(-1);
    if (last) {
      this.cursor = last.seq;
      this.#endBytes = last.endBytes;
      if (this.#pinned) this.log.released();
    }
    return items;
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
}
