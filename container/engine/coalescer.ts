/**
 * Coalesces pipe reads into log chunks: up to `maxBytes`, or whatever arrived within `maxDelayMs`.
 * Never line-buffered (a progress bar without a newline still arrives within a few ms).
 *
 * Arrival order across stdout/stderr is kept: data on one stream flushes what is pending on the
 * other first. With `holdUtf8`, an incomplete trailing UTF-8 sequence is held back until its
 * remaining bytes arrive (or the stream ends), so no chunk splits a character.
 */
import type { OutputStream } from "../../protocol/process.ts";
import { completeUtf8Length } from "./utf8.ts";

export type ChunkSink = (stream: OutputStream, data: Buffer) => void;

export interface CoalescerOptions {
  maxBytes: number;
  maxDelayMs: number;
  holdUtf8: boolean;
}

export class OutputCoalescer {
  readonly #sink: ChunkSink;
  readonly #options: CoalescerOptions;
  #pendingStream: OutputStream | undefined;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Bytes of an unfinished character, per stream. */
  #carry: Record<OutputStream, Buffer | undefined> = { stdout: undefined, stderr: undefined };

  constructor(sink: ChunkSink, options: CoalescerOptions) {
    this.#sink = sink;
    this.#options = options;
  }

  write(stream: OutputStream, data: Buffer): void {
    if (data.length === 0) return;
    if (this.#pendingStream !== undefined && this.#pendingStream !== stream) this.flush();
    const carry = this.#carry[stream];
    if (carry) {
      this.#carry[stream] = undefined;
      data = Buffer.concat([carry, data]);
    }
    this.#pendingStream = stream;
    this.#pending.push(data);
    this.#pendingBytes += data.length;
    while (this.#pendingBytes >= this.#options.maxBytes) this.#emitFullChunk(stream);
    if (this.#pendingBytes > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.flush();
      }, this.#options.maxDelayMs);
    }
  }

  /** Emits what is pending now (minus a held-back partial character). */
  flush(): void {
    this.#clearTimer();
    const stream = this.#pendingStream;
    if (stream === undefined || this.#pendingBytes === 0) return;
    const data = this.#take(this.#pendingBytes);
    const cut = this.#options.holdUtf8 ? completeUtf8Length(data) : data.length;
    if (cut < data.length) this.#carry[stream] = Buffer.from(data.subarray(cut));
    if (cut > 0) this.#sink(stream, data.subarray(0, cut));
  }

  /** The pipes are done: emit everything, including bytes of a character that will never finish. */
  end(): void {
    this.flush();
    for (const stream of ["stdout", "stderr"] as const) {
      const carry = this.#carry[stream];
      this.#carry[stream] = undefined;
      if (carry) this.#sink(stream, carry);
    }
  }

  #emitFullChunk(stream: OutputStream): void {
    const max = this.#options.maxBytes;
    const data = this.#take(max);
    let cut = this.#options.holdUtf8 ? completeUtf8Length(data) : data.length;
    if (cut === 0) cut = data.length; // pathological: nothing but continuation bytes
    if (cut < data.length) this.#unshift(stream, data.subarray(cut));
    this.#sink(stream, data.subarray(0, cut));
  }

  /** Removes and returns the first `n` pending bytes as one buffer (no copy when one piece suffices). */
  #take(n: number): Buffer {
    const first = this.#pending[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.#pending.shift();
      else this.#pending[0] = first.subarray(n);
    } else {
      const parts: Buffer[] = [];
      let need = n;
      while (need > 0) {
        const head = this.#pending[0]!;
        if (head.length <= need) {
          parts.push(head);
          this.#pending.shift();
          need -= head.length;
        } else {
          parts.push(head.subarray(0, need));
          this.#pending[0] = head.subarray(need);
          need = 0;
        }
      }
      out = Buffer.concat(parts, n);
    }
    this.#pendingBytes -= n;
    if (this.#pendingBytes === 0) this.#pendingStream = undefined;
    return out;
  }

  #unshift(stream: OutputStream, data: Buffer): void {
    this.#pendingStream = stream;
    this.#pending.unshift(data);
    this.#pendingBytes += data.length;
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
