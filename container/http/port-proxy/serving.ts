/**
 * Where the preview-port proxy joins the server: HTTP requests for `/api/ports/{port}/proxy/…` are
 * taken before the route table (which knows fixed paths only), after the same secret check every
 * route has; upgrades for them, and raw tunnels (`/api/ports/{port}/tunnel`), are claimed ahead of
 * the terminal sockets (whose handler has checked the secret already).
 */
import type { RequestListener } from "node:http";
import { carriesSecret } from "../../../server-kit/http/bearer.ts";
import { sendErrorCode } from "../../../server-kit/http/response.ts";
import type { PortConnector } from "../../ports/port-connector.ts";
import { proxyHttp, proxyTargetOf, proxyTunnel, proxyUpgrade, tunnelPortOf } from "./proxy.ts";
import type { UpgradeClaim } from "../terminal-socket.ts";

export interface PortProxyServing {
  /** The server's listener with proxied requests taken out first. */
  around(listener: RequestListener): RequestListener;
  claimUpgrade: UpgradeClaim;
}

export function portProxyServing(ports: PortConnector, secret: string | undefined): PortProxyServing {
  return {
    around: (listener) => (req, res) => {
      const target = proxyTargetOf(req.url);
      if (!target) return listener(req, res);
      if (secret !== undefined && !carriesSecret(req, secret)) {
        sendErrorCode(res, "UNAUTHORIZED", "this server answers only to its secret (Authorization: Bearer …)", undefined, { connection: "close" });
        return;
      }
      void proxyHttp(ports, target, req, res);
    },
    claimUpgrade: (req, socket, head) => {
      const tunnelPort = tunnelPortOf(req.url);
      if (tunnelPort !== undefined) {
        void proxyTunnel(ports, tunnelPort, socket, head);
        return true;
      }
      const target = proxyTargetOf(req.url);
      if (!target) return false;
      void proxyUpgrade(ports, target, req, socket, head);
      return true;
    },
  };
}
