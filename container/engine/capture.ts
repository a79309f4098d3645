/**
 * The buffered exec result: the first `maxBytes` of each stream, never more than
 * LIMITS.maxExecOutputBytes (what the platform carries back), with a flag when the rest was dropped.
 * Fed synchronously by the log, so it sees every byte even when the log's own ring has moved on.
 */
import { LIMITS } from "../../protocol/limits.ts";
import type { OutputEncoding, OutputStream } from "../../protocol/process.ts";
import type { OutputLog } from "./output-log.ts";
import { truncateUtf8 } from "./utf8.ts";

interface StreamCapture {
  chunks: Buffer[];
  bytes: number;
  truncated: boolean;
}

export class OutputCapture {
  readonly maxBytes: number;
  readonly #streams: Record<OutputStream, StreamCapture> = {
    stdout: { chunks: [], bytes: 0, truncated: false },
    stderr: { chunks: [], bytes: 0, truncated: false },
  };

  readonly #unsubscribe: () => void;

  constructor(log: OutputLog, maxBytes: number) {
    this.maxBytes = Math.min(maxBytes, LIMITS.maxExecOutputBytes);
    this.#unsubscribe = log.subscribe((entry) => {
      if (entry.kind === "output") this.#add(entry.stream, entry.data);
    });
  }

  /** Stops capturing and lets the captured chunks go. */
  release(): void {
    this.#unsubscribe();
    for (const capture of Object.values(this.#streams)) {
      capture.chunks = [];
      capture.bytes = 0;
    }
  }

  #add(stream: OutputStream, data: Buffer): void {
    const capture = this.#streams[stream];
    if (capture.truncated) return;
    // Keep one byte beyond the cap so a character split by the cap can be detected and cut cleanly.
    const room = this.maxBytes + 1 - capture.bytes;
    const piece = data.length <= room ? data : data.subarray(0, room);
    capture.chunks.push(piece);
    capture.bytes += piece.length;
    if (capture.bytes > this.maxBytes) capture.truncated = true;
  }

  /** The captured bytes of a stream; when truncated, text is cut at a character boundary. */
  bytes(stream: OutputStream, encoding: OutputEncoding): Buffer {
    const capture = this.#streams[stream];
    const all = Buffer.concat(capture.chunks, capture.bytes);
    if (!capture.truncated) return all;
    return encoding === "utf8" ? truncateUtf8(all, this.maxBytes) : all.subarray(0, this.maxBytes);
  }

  /** What the capture holds now (both streams). */
  get bytesHeld(): number {
    return this.#streams.stdout.bytes + this.#streams.stderr.bytes;
  }

  truncated(stream: OutputStream): boolean {
    return this.#streams[stream].truncated;
  }
}
