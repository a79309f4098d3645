/**
 * A connection of a sandbox whose container workerd runs, offered to the Worker first, as on
 * Cloudflare: workerd is asked (workerd-dialer.ts) with the name the connection asked for (its TLS
 * server name, or the host its first HTTP request names), and
 *   - when an interception claims it, the connection becomes the Worker's: its HTTP goes through
 *     the tunnel as it is, and its TLS is terminated with the sandbox's own authority (the one its
 *     container trusts, and the one the sidecar's `GET /ca` answers) and the HTTP inside goes so;
 *   - when none does, it is said to be passed by, and goes on through the proxy, under the
 *     container's internet switch and the runtime's policy (connection.ts).
 * workerd is not asked when no interception could claim the connection (no pattern of theirs covers
 * its name, and none is by address): its answer could only be "passed by".
 *
 * A connection the Worker takes stays within the sandbox's walls: it is one of the sandbox's held
 * connections (its cap), it is cut with its container and when a policy change denies its host,
 * its pipes hold one read at a time each way, and it gets one audit entry when it ends, naming the
 * Worker (WORKER_RULE) and its bytes each way.
 */
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { TLSSocket } from "node:tls";
import type { EgressFlows } from "./egress-flows.ts";
import type { Speech } from "./first-bytes.ts";
import { HEAD_WAIT_MS } from "./http-exchange.ts";
import type { OriginalDestination } from "./original-destination.ts";
import { chargeTo } from "./proxy-memory.ts";
import { peekRequest, type PeekedRequest } from "./request-peek.ts";
import { askWorkerd } from "./workerd-dialer.ts";
import { WORKER_RULE, type WorkerdEgress } from "./workerd-egress.ts";
import { resetSocket } from "./reset-socket.ts";

/** How long a joined pair one side has ended may go quiet before both are closed (as connection.ts's piped TCP). */
const HALF_OPEN_IDLE_MS = 60_000;

/** What became of the offer: the Worker took it (or it ended), or it was passed by, with what was read of it. */
export type Offer = { taken: true } | { taken: false; name: string | undefined; request: PeekedRequest | undefined };

export async function offerToWorker(egress: EgressFlows, workerd: WorkerdEgress, socket: Socket, destination: OriginalDestination, speech: Speech): Promise<Offer> {
  const request = speech.kind === "http" ? await peekRequest(socket, destination, HEAD_WAIT_MS) : undefined;
  if (socket.destroyed) return { taken: true };
  const name = speech.kind === "tls" ? speech.serverName : request?.host;
  if (!workerd.mayClaim(name)) return { taken: false, name, request };
  const answer = await askWorkerd({
    host: workerd.host,
    port: workerd.port,
    destination,
    source: { ip: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 },
    ...(speech.kind === "tls" && name ? { serverName: name } : {}),
    ...(speech.kind === "http" && name ? { hostname: name } : {}),
  });
  const kind = speech.kind === "tls" ? "https" : speech.kind === "http" ? "http" : "tcp";
  const base = { kind, ...(name ? { host: name } : {}), ip: destination.ip, port: destination.port } as const;
  if (answer.kind === "passed") return { taken: false, name, request };
  if (answer.kind === "failed") {
    egress.audit.add({ ...base, bytesOut: 0, bytesIn: 0, decision: "denied", rule: WORKER_RULE, reason: answer.reason });
    socket.resetAndDestroy();
    return { taken: true };
  }
  const { tunnel, overhead } = answer;
  if (socket.destroyed) {
    tunnel.destroy();
    return { taken: true };
  }
  let client: Duplex = socket;
  if (speech.kind === "tls") {
    const certificateName = name ?? egress.testHosts?.nameOf(destination.ip) ?? destination.ip;
    try {
      const context = await (await egress.certificates()).contextFor(certificateName);
      const secure = new TLSSocket(socket, { isServer: true, secureContext: context, ALPNProtocols: ["http/1.1"] });
      chargeTo(secure, egress.connections.buffers);
      secure.on("error", () => socket.destroy());
      client = secure;
    } catch (error) {
      tunnel.destroy();
      egress.audit.add({ ...base, bytesOut: 0, bytesIn: 0, decision: "denied", rule: "proxy", reason: `no certificate: ${(error as Error).message}` });
      socket.resetAndDestroy();
      return { taken: true };
    }
  }
  joinTunnel(egress, { socket, client, tunnel, names: name ? [name] : [], destination }, (cut) =>
    egress.audit.add({
      ...base,
      bytesOut: Math.max(0, tunnel.bytesWritten - overhead.sent),
      bytesIn: Math.max(0, tunnel.bytesRead - overhead.received),
      decision: "allowed",
      rule: WORKER_RULE,
      reason: cut ? `handled by the Worker's outbound handler; ${cut}` : "handled by the Worker's outbound handler",
    }),
  );
  return { taken: true };
}

interface TunnelPair {
  /** The sandbox's connection. */
  socket: Socket;
  /** What the sandbox says on it: the socket itself, or the TLS the proxy terminated on it. */
  client: Duplex;
  tunnel: Socket;
  /** What a policy change judges it by: the name it asked for, and where it was going. */
  names: string[];
  destination: OriginalDestination;
}

/** Joins the sandbox's side to workerd's tunnel until either closes; `ended` is told once, with what cut it, if anything did. */
function joinTunnel(egress: EgressFlows, pair: TunnelPair, ended: (cut: string | undefined) => void): void {
  const { socket, client, tunnel } = pair;
  socket.allowHalfOpen = true;
  tunnel.allowHalfOpen = true;
  let cutBy: string | undefined;
  let finished = false;
  const untrack = egress.track({
    names: pair.names,
    ip: pair.destination.ip,
    port: pair.destination.port,
    worker: true,
    cut(why) {
      cutBy = why;
      resetSocket(socket);
      tunnel.destroy();
    },
  });
  const finish = () => {
    if (finished) return;
    finished = true;
    untrack();
    if (!socket.destroyed) socket.destroy();
    if (!tunnel.destroyed) tunnel.destroy();
    ended(cutBy);
  };
  const quiet = () => {
    socket.destroy();
    tunnel.destroy();
  };
  const halfOpen = () => {
    socket.setTimeout(HALF_OPEN_IDLE_MS, quiet);
    tunnel.setTimeout(HALF_OPEN_IDLE_MS, quiet);
  };
  client.once("end", halfOpen);
  tunnel.once("end", halfOpen);
  tunnel.on("error", () => resetSocket(socket));
  socket.on("error", () => tunnel.destroy());
  client.on("error", () => tunnel.destroy());
  client.pipe(tunnel);
  tunnel.pipe(client);
  tunnel.once("close", finish);
  socket.once("close", finish);
}
