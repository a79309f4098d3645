/**
 * Where a connection of a sandbox was going. The namespace hands every outbound TCP connection to
 * the proxy's transparent listener untranslated (TPROXY: firewall-table.ts), so the accepted
 * socket's own local address and port are the ones the sandbox dialed: nothing to look up, at no
 * cost however many connections the sandbox holds.
 *
 * A connection made to the listener itself (127.0.0.1 and its port) is no destination: the proxy
 * refuses it.
 */
import type { Socket } from "node:net";

export interface OriginalDestination {
  ip: string;
  port: number;
}

export function originalDestination(socket: Socket, listenerPort: number): OriginalDestination | undefined {
  const ip = socket.localAddress;
  const port = socket.localPort;
  if (ip === undefined || port === undefined) return undefined;
  if (ip === "127.0.0.1" && port === listenerPort) return undefined;
  return { ip, port };
}
