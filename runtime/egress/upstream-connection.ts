/**
 * The proxy's own connection to the host a request was judged to go to: TCP, or TLS to that name
 * with its real certificate checked (the test name map's authority added for mapped names). It
 * reads into large slabs (read-buffers.ts), so a download reaches the sandbox in a few large writes
 * instead of many 64 KiB ones, as much at a time as its sandbox's buffers allow. It serves the next request to the same host while both ends allow it.
 */
import { connect as connectTcp, isIP, type OnReadOpts, type Socket } from "node:net";
import { connect as connectTls, createSecureContext, rootCertificates, type ConnectionOptions, type SecureContext } from "node:tls";
import { Inbound } from "./inbound.ts";
import { PROXY_LIMITS } from "./proxy-limits.ts";
import { released, slabReads } from "./read-buffers.ts";
import type { TestHostMap } from "./test-hosts.ts";
import type { Target } from "./upstream.ts";

export class UpstreamConnection {
  /** Which requests it may serve: same address, port, and TLS name. */
  readonly key: string;
  readonly socket: Socket;
  readonly inbound: Inbound;
  #reusable = true;

  private constructor(key: string, dial: (onread: OnReadOpts) => Socket) {
    this.key = key;
    let inbound: Inbound | undefined;
    const reads = slabReads(
      (chunk) => inbound!.push(chunk),
      (most) => inbound?.claimRead(most) ?? Math.min(most, PROXY_LIMITS.bufferedPerConnection),
    );
    this.socket = dial(reads.options);
    inbound = this.inbound = new Inbound(this.socket, released);
    this.socket.on("error", (error) => inbound.fail(error));
    this.socket.once("end", () => inbound.end());
    this.socket.once("close", () => {
      inbound.fail(new Error("the connection closed"));
      reads.close();
    });
  }

  /** A connection to `target`: TLS when `tlsName` is given (the name its certificate must have). */
  static dial(target: Target, tlsName: string | undefined, testHosts: TestHostMap | undefined): UpstreamConnection {
    const key = UpstreamConnection.keyOf(target, tlsName);
    if (tlsName === undefined) return new UpstreamConnection(key, (onread) => connectTcp({ host: target.host, port: target.port, onread }));
    const ca = target.mapped && testHosts?.ca ? { secureContext: testTrust(testHosts.ca) } : {};
    // The certificate is checked against the name; an address literal is checked too, but sent as no server name.
    const name = isIP(tlsName) ? {} : { servername: tlsName };
    const options: ConnectionOptions = { host: target.host, port: target.port, ALPNProtocols: ["http/1.1"], ...ca, ...name };
    return new UpstreamConnection(key, (onread) => connectTls({ ...options, onread } as ConnectionOptions));
  }

  static keyOf(target: Target, tlsName: string | undefined): string {
    return `${target.host}|${target.port}|${tlsName ?? ""}`;
  }

  /** It will not be used again (the answer said close, or ended with the connection, or went wrong). */
  retire(): void {
    this.#reusable = false;
  }

  /** Whether the next request to the same host may go on it. */
  get reusable(): boolean {
    return this.#reusable && !this.socket.destroyed && this.socket.writable && this.inbound.open && this.inbound.pendingBytes === 0;
  }

  destroy(): void {
    this.#reusable = false;
    this.socket.destroy();
  }
}

/** The system's roots and the test servers' authority, read once (building trust from PEM costs milliseconds). */
const testTrusts = new Map<string, SecureContext>();
function testTrust(ca: string): SecureContext {
  let context = testTrusts.get(ca);
  if (!context) testTrusts.set(ca, (context = createSecureContext({ ca: [...rootCertificates, ca] })));
  return context;
}
