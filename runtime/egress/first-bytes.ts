/**
 * What a connection speaks, from its first bytes: a TLS ClientHello (and the server name it asks
 * for), an HTTP/1 request, or anything else. The bytes are put back (`unshift`): whoever reads the
 * socket next (the HTTP exchange, TLS on the socket's handle, a pipe) reads them first. A protocol
 * whose server speaks first (SMTP, MySQL) sends nothing: after PEEK_MS it is taken as plain TCP.
 */
import type { Socket } from "node:net";
import { HEAD_WAIT_MS } from "./http-exchange.ts";

/** How long a client that says nothing is given before its connection is taken as plain TCP. */
export const PEEK_MS = 250;
/** Ports whose protocols (HTTP, TLS) have the client speak first. */
const CLIENT_FIRST_PORTS = new Set([80, 443]);

/** How long the proxy waits for the first bytes of a connection to `port`. */
export function peekWait(port: number): number {
  return CLIENT_FIRST_PORTS.has(port) ? HEAD_WAIT_MS : PEEK_MS;
}

export type Speech = { kind: "tls"; serverName: string | undefined } | { kind: "http" } | { kind: "tcp" } | { kind: "closed" };

const HTTP_METHOD = /^(GET|HEAD|POST|PUT|DELETE|PATCH|OPTIONS|TRACE|CONNECT|PROPFIND|PROPPATCH|MKCOL|COPY|MOVE|LOCK|UNLOCK|REPORT|SEARCH) /;

export function firstBytes(socket: Socket, waitMs = PEEK_MS): Promise<Speech> {
  return new Promise((resolve) => {
    const done = (speech: Speech, chunk?: Buffer) => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.pause();
      if (chunk) socket.unshift(chunk);
      resolve(speech);
    };
    const onData = (chunk: Buffer) => done(classify(chunk), chunk);
    const onClose = () => done({ kind: "closed" });
    const timer = setTimeout(() => done({ kind: "tcp" }), waitMs);
    socket.on("data", onData);
    socket.once("close", onClose);
    socket.resume();
  });
}

function classify(chunk: Buffer): Speech {
  if (chunk[0] === 0x16 && chunk[1] === 0x03) return { kind: "tls", serverName: serverNameOf(chunk) };
  if (HTTP_METHOD.test(chunk.toString("latin1", 0, Math.min(chunk.length, 16)))) return { kind: "http" };
  return { kind: "tcp" };
}

/** The server_name extension of a ClientHello (RFC 8446 4.1.2, RFC 6066 3), if the record holds it whole. */
export function serverNameOf(record: Buffer): string | undefined {
  try {
    let offset = 5; // record header
    if (record[offset] !== 0x01) return undefined; // handshake type: ClientHello
    offset += 4 + 2 + 32; // handshake header, version, random
    offset += 1 + record[offset]!; // session id
    offset += 2 + record.readUInt16BE(offset); // cipher suites
    offset += 1 + record[offset]!; // compression methods
    const end = offset + 2 + record.readUInt16BE(offset);
    offset += 2;
    while (offset + 4 <= end) {
      const type = record.readUInt16BE(offset);
      const length = record.readUInt16BE(offset + 2);
      offset += 4;
      if (type === 0) {
        // server_name_list: length, then entries of (type, length, name); host_name is type 0.
        let entry = offset + 2;
        while (entry + 3 <= offset + length) {
          const nameLength = record.readUInt16BE(entry + 1);
          if (record[entry] === 0) return record.toString("latin1", entry + 3, entry + 3 + nameLength).toLowerCase();
          entry += 3 + nameLength;
        }
        return undefined;
      }
      offset += length;
    }
  } catch {
    // a ClientHello cut short (or not one at all)
  }
  return undefined;
}
