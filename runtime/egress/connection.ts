/**
 * One outbound TCP connection of a sandbox, as it reaches the proxy: where it was going (the
 * namespace's connection tracking), what it speaks (its first bytes), then one of three ways.
 *   - HTTP: each request is judged by its Host and forwarded by name (http-exchange.ts).
 *   - TLS: terminated with a certificate of the sandbox's own authority for the name it asks, then
 *     each request judged and forwarded like HTTP, its Host held to that name.
 *   - anything else: judged by the address dialed and the names our resolver gave out for it, then
 *     piped to that address.
 * A refused connection is reset at once (the sandbox sees "connection reset"), and the audit trail
 * says why.
 */
import { connect, type Socket } from "node:net";
import { TLSSocket } from "node:tls";
import { decide } from "../../protocol/network-policy.ts";
import { firstBytes } from "./first-bytes.ts";
import { serveHttp } from "./http-exchange.ts";
import type { NamespaceSockets } from "./namespace.ts";
import { NAMESPACE_ADDRESSES } from "./namespace-addresses.ts";
import { originalDestination, type OriginalDestination } from "./original-destination.ts";
import type { EgressFlows } from "./egress-flows.ts";
import { neverReached } from "./upstream.ts";

export async function handleConnection(egress: EgressFlows, socket: Socket, sockets: NamespaceSockets): Promise<void> {
  socket.on("error", () => undefined);
  const peer = { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 };
  let destination: OriginalDestination | undefined;
  try {
    destination = await originalDestination(sockets.conntrack, peer, sockets.port);
  } catch {
    destination = undefined;
  }
  if (!destination) {
    egress.audit.add({ kind: "tcp", bytesOut: 0, bytesIn: 0, decision: "denied", rule: "proxy", reason: "no original destination (a connection to the proxy itself)" });
    socket.resetAndDestroy();
    return;
  }
  if (destination.ip === NAMESPACE_ADDRESSES.resolver && destination.port === 53) {
    egress.audit.add({ kind: "dns", ip: destination.ip, port: 53, bytesOut: 0, bytesIn: 0, decision: "denied", rule: "resolver", reason: "DNS over TCP is not served" });
    socket.resetAndDestroy();
    return;
  }
  const speech = await firstBytes(socket);
  if (speech.kind === "closed") return;
  if (speech.kind === "http") {
    serveHttp(egress, socket, { destination });
    return;
  }
  if (speech.kind === "tls") {
    await interceptTls(egress, socket, destination, speech.serverName);
    return;
  }
  pipeTcp(egress, socket, destination);
}

/**
 * TLS is served on the socket's own handle (no stream in between); the ClientHello put back on the
 * socket is read from it first.
 */
async function interceptTls(egress: EgressFlows, socket: Socket, destination: OriginalDestination, serverName: string | undefined): Promise<void> {
  // Without a name, the certificate is for the address dialed (https://203.0.113.7/).
  const name = serverName ?? egress.testHosts?.nameOf(destination.ip) ?? destination.ip;
  let secure: TLSSocket;
  try {
    const context = await (await egress.certificates()).contextFor(name);
    secure = new TLSSocket(socket, { isServer: true, secureContext: context, ALPNProtocols: ["http/1.1"] });
  } catch (error) {
    egress.audit.add({ kind: "https", host: name, ip: destination.ip, port: destination.port, bytesOut: 0, bytesIn: 0, decision: "denied", rule: "proxy", reason: `no certificate: ${(error as Error).message}` });
    socket.resetAndDestroy();
    return;
  }
  secure.on("error", () => socket.destroy());
  serveHttp(egress, secure, { destination, serverName: name });
}

function pipeTcp(egress: EgressFlows, socket: Socket, destination: OriginalDestination): void {
  const names = egress.namesOf(destination.ip);
  const testName = egress.testHosts?.nameOf(destination.ip);
  const mapped = testName === undefined ? undefined : egress.testHosts!.target(testName, destination.port);
  const base = { kind: "tcp" as const, ip: destination.ip, port: destination.port, ...(names[0] ? { host: names[0] } : {}) };
  const verdict = decide(egress.policy, { names, ip: destination.ip, port: destination.port });
  const never = mapped ? undefined : neverReached(destination.ip);
  if (!verdict.allowed || never) {
    egress.audit.add({ ...base, bytesOut: 0, bytesIn: 0, decision: "denied", rule: never ? "never" : verdict.rule, reason: never ?? "denied by the policy" });
    socket.resetAndDestroy();
    return;
  }
  const upstream = connect(mapped ?? { host: destination.ip, port: destination.port });
  let reason: string | undefined;
  let finished = false;
  const untrack = egress.track({
    names,
    ip: destination.ip,
    port: destination.port,
    cut(why) {
      reason = why;
      socket.resetAndDestroy();
      upstream.destroy();
    },
  });
  const finish = () => {
    if (finished) return;
    finished = true;
    untrack();
    egress.audit.add({ ...base, bytesOut: upstream.bytesWritten, bytesIn: upstream.bytesRead, decision: "allowed", rule: verdict.rule, ...(reason ? { reason } : {}) });
  };
  upstream.once("connect", () => {
    socket.pipe(upstream);
    upstream.pipe(socket);
    socket.resume();
  });
  upstream.on("error", (error) => {
    reason ??= `upstream: ${(error as NodeJS.ErrnoException).code ?? error.message}`;
    socket.resetAndDestroy();
  });
  socket.on("error", () => upstream.destroy());
  upstream.once("close", () => {
    if (!socket.destroyed) socket.end();
    finish();
  });
  socket.once("close", () => {
    upstream.end();
    finish();
  });
}
