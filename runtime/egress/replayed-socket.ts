/**
 * A connection whose first bytes were already read (to tell what it speaks), given to a consumer
 * from its start: those bytes first, then the rest as it comes, with writes going straight through.
 * Node's HTTP server and TLS read a plain socket's handle directly, past anything put back with
 * `unshift`; a stream of this kind they read as a stream.
 */
import { Duplex } from "node:stream";
import type { Socket } from "node:net";

export class ReplayedSocket extends Duplex {
  readonly #socket: Socket;
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;

  constructor(socket: Socket, first: Buffer) {
    super({ allowHalfOpen: true, highWaterMark: 1024 * 1024 });
    this.#socket = socket;
    this.remoteAddress = socket.remoteAddress;
    this.remotePort = socket.remotePort;
    this.push(first);
    socket.on("data", (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.once("end", () => this.push(null));
    socket.once("close", () => this.destroy());
    socket.on("error", (error) => this.destroy(error));
  }

  override _read(): void {
    this.#socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#socket.write(chunk, encoding, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#socket.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#socket.destroy();
    callback(error);
  }

  /** What the HTTP server may call on a connection. */
  setTimeout(ms: number, callback?: () => void): this {
    this.#socket.setTimeout(ms, callback);
    return this;
  }

  setNoDelay(noDelay?: boolean): this {
    this.#socket.setNoDelay(noDelay);
    return this;
  }

  setKeepAlive(enable?: boolean, delay?: number): this {
    this.#socket.setKeepAlive(enable, delay);
    return this;
  }

  /** Resets the underlying connection (the sandbox sees "connection reset"). */
  reset(): void {
    this.#socket.resetAndDestroy();
  }
}
