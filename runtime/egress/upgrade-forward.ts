/**
 * A protocol upgrade (a WebSocket handshake) from a sandbox, once the server has switched
 * protocols: the handshake was judged and injected like any request (http-exchange.ts), and now the
 * two connections are joined byte for byte, whatever either had already sent first, until either
 * side closes, or until a policy change denies the host (then both are cut). The audit entry is
 * written when the joined connection ends, with its bytes each way.
 */
import type { Socket } from "node:net";
import { BodyScanner } from "./http-framing.ts";
import type { Inbound } from "./inbound.ts";
import type { EgressFlows } from "./egress-flows.ts";
import type { UpstreamConnection } from "./upstream-connection.ts";

export interface UpgradedPair {
  client: Socket;
  clientIn: Inbound;
  upstream: UpstreamConnection;
  /** The host the handshake was judged for, the address it went to, and the port the sandbox dialed: what a policy change judges again. */
  host: string;
  ip: string;
  port: number;
}

export function joinUpgraded(egress: EgressFlows, pair: UpgradedPair, ended: (joined: { bytesOut: number; bytesIn: number; reason?: string }) => void): void {
  const { client, clientIn, upstream } = pair;
  const out = new BodyScanner({ kind: "close" }, 400);
  const back = new BodyScanner({ kind: "close" }, 502);
  let reason: string | undefined;
  const cut = () => {
    client.destroy();
    upstream.destroy();
  };
  const untrack = egress.track({
    names: [pair.host],
    ip: pair.ip,
    port: pair.port,
    cut(why) {
      reason = why;
      cut();
    },
  });
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    untrack();
    cut();
    ended({ bytesOut: out.content, bytesIn: back.content, ...(reason ? { reason } : {}) });
  };
  clientIn.relay(out, upstream.socket).then(() => upstream.socket.end(), () => undefined);
  upstream.inbound.relay(back, client).then(() => client.end(), () => undefined);
  client.once("close", finish);
  upstream.socket.once("close", finish);
}
