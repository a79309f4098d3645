/**
 * One outbound TCP connection of a sandbox, as it reaches the proxy: where it was going (its own
 * local address: original-destination.ts), whether the sandbox may hold one more (held-connections.ts),
 * what it speaks (its first bytes); where workerd runs its container, whether the Worker takes it
 * (workerd-interception.ts: if not, the container's internet switch must be on); then one of three ways.
 *   - HTTP: each request is judged by its Host and forwarded by name (http-exchange.ts).
 *   - TLS: terminated with a certificate of the sandbox's own authority for the name it asks, then
 *     each request judged and forwarded like HTTP, its Host held to that name.
 *   - anything else: judged by the address dialed and the names our resolver gave out for it, then
 *     piped to that address, each side's end passed on to the other (a half-closed connection stays
 *     half-open until the other side ends, or both go quiet), and the server's connection reset the
 *     moment the sandbox's is gone, so none is left waiting for a close that will not come.
 * A refused connection is reset at once (the sandbox sees "connection reset"), and the audit trail
 * says why.
 */
import { connect, type Socket } from "node:net";
import { TLSSocket } from "node:tls";
import { decide } from "../../protocol/network-policy.ts";
import { firstBytes, peekWait } from "./first-bytes.ts";
import { serveHttp } from "./http-exchange.ts";
import type { NamespaceSockets } from "./namespace.ts";
import { NAMESPACE_ADDRESSES } from "./namespace-addresses.ts";
import { originalDestination, type OriginalDestination } from "./original-destination.ts";
import type { EgressFlows } from "./egress-flows.ts";
import { chargeTo } from "./proxy-memory.ts";
import { neverReached } from "./upstream.ts";
import type { FlowContext } from "./flow-context.ts";
import type { Speech } from "./first-bytes.ts";
import { offerToWorker, type Offer } from "./workerd-interception.ts";
import { INTERNET_RULE, PLACEHOLDER_ADDRESS, WORKER_RULE } from "./workerd-egress.ts";
import { EGRESS_HEADER, refusalBody, refusalHeader } from "../../protocol/egress-refusal.ts";
import { proxyAnswer } from "./http-head.ts";
import { resetSocket } from "./reset-socket.ts";

/** How long a piped connection one side has ended may go without a byte either way before both are closed: as long as Linux keeps an orphaned half-closed one (tcp_fin_timeout). */
const HALF_OPEN_IDLE_MS = 60_000;

export async function handleConnection(egress: EgressFlows, socket: Socket, sockets: NamespaceSockets): Promise<void> {
  socket.on("error", () => undefined);
  const destination = originalDestination(socket, sockets.port);
  if (!destination) {
    egress.audit.add({ kind: "tcp", bytesOut: 0, bytesIn: 0, decision: "denied", rule: "proxy", reason: "no original destination (a connection to the proxy itself)" });
    socket.resetAndDestroy();
    return;
  }
  if (!egress.connections.admit(socket, destination)) return;
  if (destination.ip === NAMESPACE_ADDRESSES.resolver && destination.port === 53) {
    egress.audit.add({ kind: "dns", ip: destination.ip, port: 53, bytesOut: 0, bytesIn: 0, decision: "denied", rule: "resolver", reason: "DNS over TCP is not served" });
    socket.resetAndDestroy();
    return;
  }
  const speech = await firstBytes(socket, peekWait(destination.port));
  if (speech.kind === "closed") return;
  let passedFor: FlowContext["passedFor"];
  const workerd = egress.workerd;
  if (workerd) {
    const offer = await offerToWorker(egress, workerd, socket, destination, speech);
    if (offer.taken) return;
    if (!workerd.internetEnabled) return refuseOffline(egress, socket, destination, speech, offer);
    if (destination.ip === PLACEHOLDER_ADDRESS && speech.kind === "tcp") {
      egress.audit.add({ kind: "tcp", ...(offer.name ? { host: offer.name } : {}), ip: destination.ip, port: destination.port, bytesOut: 0, bytesIn: 0, decision: "denied", rule: WORKER_RULE, reason: `${PLACEHOLDER_ADDRESS} leads only to the Worker, whose interceptions did not take this connection` });
      socket.resetAndDestroy();
      return;
    }
    // Every request of a plain connection the Worker passed by must name the host it was passed by for.
    if (speech.kind === "http") passedFor = { host: offer.name };
  }
  if (speech.kind === "http") {
    serveHttp(egress, socket, { destination, ...(passedFor ? { passedFor } : {}) });
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
    chargeTo(secure, egress.connections.buffers);
  } catch (error) {
    egress.audit.add({ kind: "https", host: name, ip: destination.ip, port: destination.port, bytesOut: 0, bytesIn: 0, decision: "denied", rule: "proxy", reason: `no certificate: ${(error as Error).message}` });
    socket.resetAndDestroy();
    return;
  }
  secure.on("error", () => socket.destroy());
  serveHttp(egress, secure, { destination, serverName: name });
}

/**
 * What the Worker passed by while the container's internet is off: refused, as workerd refuses it.
 * A plain HTTP request is answered 403 the way every refusal of the egress is; anything else is reset.
 */
function refuseOffline(egress: EgressFlows, socket: Socket, destination: OriginalDestination, speech: Speech, offer: Extract<Offer, { taken: false }>): void {
  const reason = "the container's internet is off (enableInternet: false), and no interception of the Worker's took this";
  const kind = speech.kind === "tls" ? "https" : speech.kind === "http" ? "http" : "tcp";
  const request = offer.request;
  egress.audit.add({
    kind,
    ...(offer.name ? { host: offer.name } : {}),
    ip: destination.ip,
    port: destination.port,
    ...(request ? { method: request.method, path: request.path, status: 403 } : {}),
    bytesOut: 0,
    bytesIn: 0,
    decision: "denied",
    rule: INTERNET_RULE,
    reason,
  });
  if (!request) return void socket.resetAndDestroy();
  const refused = { method: request.method, tls: false, host: offer.name, port: destination.port, path: request.path };
  socket.end(proxyAnswer(403, [[EGRESS_HEADER, refusalHeader(INTERNET_RULE)]], refusalBody(refused, reason, INTERNET_RULE)));
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
  // Each side may end its half and still read the other's (shutdown after sending a request).
  socket.allowHalfOpen = true;
  const upstream = connect({ ...(mapped ?? { host: destination.ip, port: destination.port }), allowHalfOpen: true });
  let reason: string | undefined;
  let finished = false;
  const untrack = egress.track({
    names,
    ip: destination.ip,
    port: destination.port,
    cut(why) {
      reason = why;
      resetSocket(socket);
      resetUpstream();
    },
  });
  function resetUpstream(): void {
    resetSocket(upstream);
  }
  const finish = () => {
    if (finished) return;
    finished = true;
    untrack();
    egress.audit.add({ ...base, bytesOut: upstream.bytesWritten, bytesIn: upstream.bytesRead, decision: "allowed", rule: verdict.rule, ...(reason ? { reason } : {}) });
  };
  // Once either side has ended its half, the pair is closed when neither says anything for a while.
  const quiet = () => {
    socket.destroy();
    upstream.destroy();
  };
  const halfOpen = () => {
    socket.setTimeout(HALF_OPEN_IDLE_MS, quiet);
    upstream.setTimeout(HALF_OPEN_IDLE_MS, quiet);
  };
  socket.once("end", halfOpen);
  upstream.once("end", halfOpen);
  upstream.once("connect", () => {
    socket.pipe(upstream);
    upstream.pipe(socket);
    socket.resume();
  });
  upstream.on("error", (error) => {
    reason ??= `upstream: ${(error as NodeJS.ErrnoException).code ?? error.message}`;
    resetSocket(socket);
  });
  socket.on("error", () => resetUpstream());
  upstream.once("close", () => {
    if (!socket.destroyed) socket.end();
    finish();
  });
  // The sandbox's side is gone: whatever the server still had to say has no one to go to.
  socket.once("close", () => {
    if (!upstream.readableEnded || !upstream.writableFinished) resetUpstream();
    finish();
  });
}
