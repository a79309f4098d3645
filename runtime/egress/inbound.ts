/**
 * One side of a proxied HTTP connection, as its bytes arrive: held until a consumer takes them, a
 * head at a time or a body at a time. A body is passed on as the chunks it arrived in (no copy, no
 * parsing beyond finding its end: http-framing.ts), and whatever follows it waits here, its source
 * paused, until the next head is asked for. So nothing after a message reaches a server before that
 * next head is read and judged, however the client packs its bytes. A sink that is full pauses the
 * source until it drains; bytes that come with no consumer are held and pause it too. What a sink
 * holds counts against its sandbox's buffers (proxy-memory.ts), and is full sooner when those are
 * spent.
 */
import type { Duplex, Writable } from "node:stream";
import type { BodyScanner } from "./http-framing.ts";
import { headEnd, MessageError } from "./http-head.ts";
import { budgetOf, type ByteBudget } from "./proxy-memory.ts";
import { PROXY_LIMITS } from "./proxy-limits.ts";

interface Consumer {
  take(chunk: Buffer): void;
  end(): void;
  fail(error: Error): void;
}

const CRLF = Buffer.from("\r\n");

export class Inbound {
  readonly #source: Duplex;
  /** Told of each chunk once a sink has written it on, or it was copied (its memory may be used again). */
  readonly #written: ((chunk: Buffer) => void) | undefined;
  /** Bytes that arrived with no consumer, or after the last one's end, oldest first. */
  readonly #pending: Buffer[] = [];
  #consumer: Consumer | undefined;
  /** While a body is relayed: the buffers it is charged to (null: none). */
  #budget: ByteBudget | null | undefined;
  /** Bytes taken for a body and not yet written on (by this relay or one before it). */
  #unsent = 0;
  /** The room of the source's read under way, claimed from the buffers of the body it is read for. */
  #claim: { budget: ByteBudget; bytes: number } | undefined;
  #ended = false;
  #failure: Error | undefined;

  constructor(source: Duplex, written?: (chunk: Buffer) => void) {
    this.#source = source;
    this.#written = written;
  }

  /** Reads `stream` through its data events. */
  static of(stream: Duplex): Inbound {
    const inbound = new Inbound(stream);
    stream.on("data", (chunk: Buffer) => inbound.push(chunk));
    stream.once("end", () => inbound.end());
    stream.once("error", (error) => inbound.fail(error));
    stream.once("close", () => inbound.fail(new Error("the connection closed")));
    return inbound;
  }

  /** Bytes held for the next consumer. */
  get pendingBytes(): number {
    return this.#pending.reduce((sum, chunk) => sum + chunk.length, 0);
  }

  /**
   * Room for the source's next read, at most `most`: a large read only for a body being relayed,
   * and no more than its connection may still hold unsent (its allowance: little once its sandbox's
   * buffers are spent). The room is claimed from those buffers until the read comes.
   */
  claimRead(most: number): number {
    this.#settleClaim();
    const budget = this.#budget;
    if (budget === undefined) return Math.min(most, PROXY_LIMITS.bufferedWhenOver);
    const allowance = budget?.allowance ?? PROXY_LIMITS.bufferedPerConnection;
    const room = Math.min(most, Math.max(PROXY_LIMITS.bufferedWhenOver, allowance - this.#unsent));
    if (budget) {
      budget.claim(room);
      this.#claim = { budget, bytes: room };
    }
    return room;
  }

  #settleClaim(): void {
    if (!this.#claim) return;
    this.#claim.budget.unclaim(this.#claim.bytes);
    this.#claim = undefined;
  }

  /** Neither ended nor failed. */
  get open(): boolean {
    return !this.#ended && this.#failure === undefined;
  }

  push(chunk: Buffer): void {
    this.#settleClaim();
    if (this.#consumer) this.#consumer.take(chunk);
    else {
      this.#pending.push(chunk);
      this.#source.pause();
    }
  }

  end(): void {
    this.#settleClaim();
    if (this.#ended || this.#failure) return;
    this.#ended = true;
    this.#consumer?.end();
  }

  fail(error: Error): void {
    this.#settleClaim();
    if (this.#ended || this.#failure) return;
    this.#failure = error;
    this.#consumer?.fail(error);
  }

  /**
   * The next head (through its empty line), or undefined when the connection ends before one
   * begins. Empty lines before it are skipped (RFC 9112 2.2). `status` is what a malformed or
   * oversized head is refused with.
   */
  readHead(limit: number, status: number): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      let held: Buffer = Buffer.alloc(0);
      let scanned = 0;
      const done = (outcome: () => void) => {
        this.#detach();
        outcome();
      };
      this.#attach({
        take: (chunk) => {
          if (held.length === 0) held = chunk;
          else {
            // A head in pieces is put together in a copy: the pieces are passed on.
            const joined = Buffer.concat([held, chunk]);
            this.#written?.(held);
            this.#written?.(chunk);
            held = joined;
          }
          while (scanned === 0 && held.length >= 2 && held[0] === CRLF[0] && held[1] === CRLF[1]) {
            this.#written?.(held.subarray(0, 2));
            held = held.subarray(2);
          }
          let end: number;
          try {
            end = headEnd(held, Math.max(0, scanned - 3), status);
          } catch (error) {
            return done(() => reject(error));
          }
          if (end < 0 ? held.length > limit : end > limit) return done(() => reject(new MessageError(status === 400 ? 431 : status, `the head is longer than ${limit} bytes`)));
          if (end < 0) {
            // A lone CR may be the first half of an empty line still to be skipped.
            scanned = held.length === 1 && held[0] === CRLF[0] ? 0 : held.length;
            return;
          }
          done(() => {
            if (end < held.length) this.#pending.unshift(held.subarray(end));
            // The head is read from a copy of its own, so the memory it arrived in can be used again.
            const head = Buffer.from(held.subarray(0, end));
            this.#written?.(held.subarray(0, end));
            resolve(head);
          });
        },
        end: () => done(() => (held.length === 0 ? resolve(undefined) : reject(new MessageError(status, "the connection ended inside a head")))),
        fail: (error) => done(() => (held.length === 0 && status === 400 ? resolve(undefined) : reject(error))),
      });
    });
  }

  /**
   * Passes one body on to `sink`, as `body` frames it; resolves at its end, leaving what follows it
   * here. Rejects when the connection ends before the body does, or the body is malformed.
   */
  relay(body: BodyScanner, sink: Writable): Promise<void> {
    if (body.done) return Promise.resolve();
    return new Promise((resolve, reject) => {
      /** Waiting for the sink to drain. */
      let draining = false;
      /** Stopped where a read took it past its allowance, until its write says whether to wait for the sink. */
      let stopped = false;
      /** Bytes taken this turn of the event loop, not yet written: contiguous ones (one read buffer's) become one write. */
      let run: Buffer | undefined;
      let flushing = false;
      const resume = () => {
        draining = false;
        stopped = false;
        if (this.#consumer === consumer) this.#source.resume();
      };
      const written = this.#written;
      const budget = budgetOf(this.#source) ?? budgetOf(sink);
      this.#budget = budget ?? null;
      // A sink's own mark (16 KiB) would stop the source at every turn: it may hold up to its allowance.
      const allowance = () => budget?.allowance ?? PROXY_LIMITS.bufferedPerConnection;
      const write = (part: Buffer) => {
        // Called once the bytes are passed to the kernel, or dropped with a sink that was destroyed.
        const done = () => {
          budget?.free(part.length);
          this.#unsent -= part.length;
          written?.(part);
        };
        const accepted = sink.write(part, done);
        if (draining) return;
        if (!accepted && this.#unsent >= allowance()) {
          draining = true;
          this.#source.pause();
          sink.once("drain", resume);
        } else if (stopped) resume();
      };
      const flush = () => {
        flushing = false;
        const part = run;
        run = undefined;
        if (part) write(part);
      };
      const queue = (part: Buffer) => {
        // Held from the moment it is taken: the reads sized after it see it.
        budget?.hold(part.length);
        this.#unsent += part.length;
        // A socket reads on while it has bytes to give (many reads a turn): past its allowance it stops
        // at once, and the flush's write decides when it goes on.
        if (!draining && !stopped && this.#unsent >= allowance()) {
          stopped = true;
          this.#source.pause();
        }
        if (run && part.buffer === run.buffer && part.byteOffset === run.byteOffset + run.length) {
          run = Buffer.from(run.buffer, run.byteOffset, run.length + part.length);
          return;
        }
        if (run) write(run);
        run = part;
        if (!flushing) {
          flushing = true;
          setImmediate(flush);
        }
      };
      const finish = (outcome: () => void) => {
        flush();
        this.#detach();
        outcome();
      };
      const consumer: Consumer = {
        take: (chunk) => {
          let used: number;
          try {
            used = body.take(chunk);
          } catch (error) {
            return finish(() => reject(error));
          }
          if (used > 0) queue(used === chunk.length ? chunk : chunk.subarray(0, used));
          if (!body.done) return;
          if (used < chunk.length) this.#pending.unshift(chunk.subarray(used));
          finish(resolve);
        },
        end: () => finish(() => (body.framing.kind === "close" ? resolve() : reject(new Error("the connection ended before the body did")))),
        fail: (error) => finish(() => reject(error)),
      };
      this.#attach(consumer);
    });
  }

  #attach(consumer: Consumer): void {
    this.#consumer = consumer;
    while (this.#pending.length > 0 && this.#consumer === consumer) consumer.take(this.#pending.shift()!);
    if (this.#consumer !== consumer) return;
    if (this.#failure) consumer.fail(this.#failure);
    else if (this.#ended) consumer.end();
    else this.#source.resume();
  }

  /** The source keeps reading (so a connection that closes while idle is seen to): bytes that come are held, and pause it. */
  #detach(): void {
    this.#settleClaim();
    this.#consumer = undefined;
    this.#budget = undefined;
  }
}
