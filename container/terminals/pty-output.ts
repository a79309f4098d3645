/**
 * Every byte a PTY's program wrote, before its exit is reported. The PTY library reports an exit
 * once its socket to the PTY has closed, and destroys that socket itself 200 ms after the exit when
 * the PTY has not ended by then (a background job still holds it open, or this process was too busy
 * to read in time): whatever the program wrote that was not taken yet would go with the socket. So
 * right before that socket is destroyed, what the socket holds and then what the PTY still holds are
 * read here, synchronously (the library's descriptor is non-blocking), and handed on like any other
 * output.
 */
import { readSync } from "node:fs";
import type { IPty } from "@lydell/node-pty";

/** The parts of the library's Unix terminal this reaches into (pinned version: see package.json). */
interface UnixPtyInternals {
  _fd?: number;
  _socket?: { destroy(...args: unknown[]): unknown; read(): unknown; readableLength: number };
}

const DRAIN_BYTES = 64 * 1024;
/**
 * The most read in that last drain: a program writes at most a PTY buffer (a few KiB) it could not
 * hand over before its exit; a background job still writing to the PTY must not keep this process
 * reading forever.
 */
const DRAIN_MAX_BYTES = 1024 * 1024;

/** Calls `onOutput` with each chunk of the PTY's output, the last unread bytes included. */
export function readPtyOutput(pty: IPty, onOutput: (data: Buffer) => void): void {
  // With `encoding: null` the library hands over raw bytes; its typings still say string.
  pty.onData((data: string | Buffer) => onOutput(Buffer.isBuffer(data) ? data : Buffer.from(data)));
  const { _fd: fd, _socket: socket } = pty as unknown as UnixPtyInternals;
  if (typeof fd !== "number" || typeof socket?.destroy !== "function") return;
  const destroy = socket.destroy;
  socket.destroy = function (this: unknown, ...args: unknown[]) {
    // Read from a stream, a chunk goes to its data listeners (onData above) as well.
    while (socket.readableLength > 0 && socket.read() !== null);
    drain(fd, onOutput);
    return destroy.apply(this, args);
  };
}

function drain(fd: number, onOutput: (data: Buffer) => void): void {
  const buffer = Buffer.allocUnsafe(DRAIN_BYTES);
  for (let total = 0; total < DRAIN_MAX_BYTES; ) {
    let read: number;
    try {
      read = readSync(fd, buffer, 0, buffer.length, null);
    } catch {
      // EAGAIN: nothing more is there; EIO: the other side is closed and everything was read.
      return;
    }
    if (read === 0) return;
    total += read;
    onOutput(Buffer.from(buffer.subarray(0, read)));
  }
}
