/**
 * What the proxy knows of a connection before HTTP parses it (where it was going, the TLS name it
 * asked for), kept beside the socket for the request handler to read.
 */
import type { Duplex } from "node:stream";
import type { OriginalDestination } from "./original-destination.ts";

export interface FlowContext {
  destination: OriginalDestination;
  /** The TLS server name the client asked for (or the address, without one): requests must name the same host. */
  serverName?: string;
}

const contexts = new WeakMap<Duplex, FlowContext>();

export function bindFlow(socket: Duplex, context: FlowContext): void {
  contexts.set(socket, context);
}

export function flowOf(socket: Duplex): FlowContext | undefined {
  return contexts.get(socket);
}
