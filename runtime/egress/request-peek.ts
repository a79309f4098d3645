/**
 * The first request of a plain HTTP connection, read without taking it: its head is gathered, read
 * for the host it names (as the proxy reads it: judge-request.ts) and put back (`unshift`), so
 * whoever reads the socket next (the Worker's tunnel, or the proxy's own HTTP exchange) reads it
 * whole. What workerd is asked with (`X-Hostname`), before anything of the request goes anywhere.
 */
import type { Socket } from "node:net";
import { headEnd, MAX_HEAD_BYTES, parseRequestHead } from "./http-head.ts";
import { factsOf } from "./judge-request.ts";
import type { OriginalDestination } from "./original-destination.ts";

export interface PeekedRequest {
  method: string;
  /** The host it names (no port), when it names one unambiguously. */
  host: string | undefined;
  /** The path without its query. */
  path: string;
}

/** The first request's head, or undefined when the connection closes, stalls past `waitMs`, or sends no head the proxy reads. */
export function peekRequest(socket: Socket, destination: OriginalDestination, waitMs: number): Promise<PeekedRequest | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (peeked: PeekedRequest | undefined) => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.pause();
      if (!socket.destroyed && size > 0) socket.unshift(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      resolve(peeked);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      const held = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      let end: number;
      try {
        end = headEnd(held, 0, 400);
      } catch {
        return done(undefined);
      }
      if (end < 0) {
        if (size > MAX_HEAD_BYTES) done(undefined);
        return;
      }
      try {
        const head = parseRequestHead(held.subarray(0, end));
        const facts = factsOf(head, { destination });
        done({ method: head.method, host: facts.host, path: facts.path });
      } catch {
        done(undefined);
      }
    };
    const onClose = () => done(undefined);
    const timer = setTimeout(() => done(undefined), waitMs);
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.resume();
  });
}
