/**
 * workerd's egress sidecar, emulated: what workerd expects of the `<name>-proxy` container it starts
 * beside each container, served by the runtime itself (no image, no process of its own). One loopback
 * TCP listener per sidecar, published to workerd as the sidecar's port 39001, with:
 *
 *   PUT /egress   {port, dns: {allowHostnames}, internet: {enabled}}: where workerd's egress listener
 *                 is, the names its interceptions cover, and whether the container may reach the
 *                 internet (also workerd's readiness probe). Handed to the sandbox's egress, which
 *                 offers each connection of the container to the Worker first (../egress/).
 *   GET /ca       the authority the container trusts for intercepted HTTPS (its sandbox's egress CA,
 *                 already in the container's trust store)
 *   CONNECT       with `X-Dst-Addr: 127.0.0.1:<port>`: a raw tunnel to that port of the container
 *                 (workerd's `getTcpPort(port)`)
 *
 * A container's server listens on a loopback port of the host (bound before its network namespace
 * existed), which is how the runtime reaches it today; a tunnel to the server's port goes there. A
 * tunnel to any other port goes through that server too, as a raw tunnel it opens to the port inside
 * the sandbox's network (PORT_PROXY_ROUTES.tunnel, asked with the server's secret, which the engine
 * holds); a port nothing listens on answers 400, which workerd reports as not listening.
 *
 * The listener is on 127.0.0.1, which every user of the machine can reach. Its control requests
 * are served only to a socket owned by the runtime's own user (workerd runs as that user; peer-uid.ts
 * reads who owns the other end): another user cannot change a container's egress settings (403).
 * A tunnel to the server's port is opened for anyone, and leads only to what the container server's
 * own loopback port already offers every local user: a server that answers only to its secret.
 * (Telling the owner of each such tunnel would cost every request of workerd's a read of the kernel's
 * socket table.) A tunnel to another port carries the server's secret for its caller, so it is
 * opened only to the runtime's own user, as the control requests are. `GET /ca` is served to anyone:
 * it is the authority's certificate, which every container of the sandbox holds, never its key.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { z } from "zod";
import { PORT_PROXY_ROUTES } from "../../protocol/preview-ports.ts";
import { CONTAINER_SERVER_PORT } from "../../protocol/runtime.ts";
import { readBody } from "../../server-kit/http/body.ts";
import type { WorkerdEgressSettings } from "../egress/workerd-egress.ts";
import { BRIDGE_GATEWAY } from "./names.ts";
import { peerUid } from "./peer-uid.ts";
import { traceCall, traceEvent } from "./trace.ts";

/** What workerd puts (docker-api.capnp's egress settings); unknown fields are kept out, missing ones default. */
export const sidecarEgressSchema = z.object({
  port: z.number().int().min(0).max(65535).optional(),
  dns: z.object({ allowHostnames: z.array(z.string()).optional() }).optional(),
  internet: z.object({ enabled: z.boolean().optional() }).optional(),
});
export type SidecarEgress = z.output<typeof sidecarEgressSchema>;

export interface SidecarTarget {
  /** The host loopback port where the container's server listens (once a start under way is done), or undefined when none runs. */
  serverPort(): Promise<number | undefined>;
  /** The secret that server answers to (what opens its tunnel to the sandbox's other ports). */
  serverSecret(): string | undefined;
  /** The PEM of the authority the container trusts for intercepted HTTPS. */
  caPem(): Promise<string>;
  /**
   * Told where workerd's egress listener is, and what it said with it, after each `PUT /egress`.
   * A sidecar that stops says nothing: a container still running keeps the last word (its internet
   * switch stays as it was), and the engine forgets it when the container is removed.
   */
  egressChanged(settings: WorkerdEgressSettings | undefined): void;
}

const MAX_CONTROL_BODY_BYTES = 64 * 1024;

/** Longest a tunnel whose server is gone goes on reading what its caller still sends. */
const TUNNEL_DRAIN_MS = 5_000;

export class Sidecar {
  readonly #tcp: Server;
  readonly #http = createHttpServer();
  readonly #target: SidecarTarget;
  readonly #ownUid = process.getuid?.();
  readonly #sockets = new Set<Socket>();
  /** What workerd last put: its egress listener's port and the container's internet access. */
  egress: SidecarEgress | undefined;
  /** Control requests, and tunnels to the sandbox's other ports, refused because another user held the other end. */
  refused = 0;

  private constructor(target: SidecarTarget) {
    this.#target = target;
    this.#tcp = createServer({ pauseOnConnect: true }, (socket) => this.#accept(socket));
    this.#http.on("request", (req, res) => void this.#control(req, res));
    this.#http.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) => void this.#tunnel(req, socket, head));
  }

  static async start(target: SidecarTarget): Promise<Sidecar> {
    const sidecar = new Sidecar(target);
    await new Promise<void>((resolve, reject) => {
      sidecar.#tcp.once("error", reject);
      sidecar.#tcp.listen(0, "127.0.0.1", () => resolve());
    });
    return sidecar;
  }

  /** The loopback port workerd is told (`HostPort` of the sidecar's 39001/tcp). */
  get port(): number {
    return (this.#tcp.address() as AddressInfo).port;
  }

  /** Whether workerd lets the container reach the internet (default: yes, as workerd's own default is). */
  get internetEnabled(): boolean {
    return this.egress?.internet?.enabled ?? true;
  }

  /** workerd's egress listener and what it said with it, once workerd has put its port. */
  get workerdEgress(): WorkerdEgressSettings | undefined {
    const port = this.egress?.port;
    if (port === undefined || port === 0) return undefined;
    return { host: BRIDGE_GATEWAY, port, allowHostnames: this.egress?.dns?.allowHostnames ?? [], internetEnabled: this.internetEnabled };
  }

  close(): void {
    this.#tcp.close();
    for (const socket of this.#sockets) socket.destroy();
  }

  #accept(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
    this.#http.emit("connection", socket);
    socket.resume();
  }

  /** Whether the other end of this request's connection is the runtime's own user's. */
  async #fromOwnUser(socket: Socket): Promise<boolean> {
    if (this.#ownUid === undefined) return true;
    const uid = await peerUid({ address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 }, { address: socket.localAddress ?? "", port: socket.localPort ?? 0 });
    return uid === this.#ownUid;
  }

  async #control(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://sidecar").pathname;
    traceCall(`sidecar ${this.port} ${req.method} ${path}`, req, res);
    // The certificate is public: only what changes the sandbox's egress costs a read of the socket table.
    if (req.method === "GET" && path === "/ca") return answer(res, 200, "application/x-pem-file", await this.#target.caPem());
    if (!(await this.#fromOwnUser(req.socket))) {
      this.refused++;
      res.writeHead(403, { "content-type": "text/plain", connection: "close" });
      res.end("this sidecar serves its runtime's user only\n");
      return;
    }
    try {
      if (req.method === "PUT" && path === "/egress") {
        const parsed = sidecarEgressSchema.safeParse(JSON.parse((await readBody(req, MAX_CONTROL_BODY_BYTES)).toString() || "{}"));
        if (!parsed.success) return answer(res, 400, "text/plain", "egress settings are {port, dns: {allowHostnames}, internet: {enabled}}\n");
        // Each field replaces its own: workerd puts the port alone when it finds a sidecar already running.
        this.egress = { ...this.egress, ...parsed.data };
        this.#target.egressChanged(this.workerdEgress);
        return answer(res, 200, "text/plain", "");
      }
      answer(res, 404, "text/plain", `the sidecar serves PUT /egress, GET /ca and CONNECT, not ${req.method} ${path}\n`);
    } catch (error) {
      answer(res, 500, "text/plain", `${(error as Error).message}\n`);
    }
  }

  async #tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const destination = String(req.headers["x-dst-addr"] ?? req.url ?? "");
    traceEvent(`sidecar ${this.port} CONNECT ${destination}`);
    const match = /^(?:127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})$/.exec(destination);
    const port = match ? Number(match[1]) : 0;
    if (port < 1 || port > 65535) return refuseTunnel(client);
    const serverPort = await this.#target.serverPort();
    if (serverPort === undefined || client.destroyed) return refuseTunnel(client);
    // Another port of the sandbox answers to no secret of ours: it is opened to the runtime's own user only.
    const secret = port === CONTAINER_SERVER_PORT ? undefined : this.#target.serverSecret();
    if (port !== CONTAINER_SERVER_PORT && (secret === undefined || !(await this.#fromOwnUser(client)))) {
      if (secret !== undefined) this.refused++;
      return refuseTunnel(client);
    }
    // No Nagle on either leg: a request written in parts (head, then body) would otherwise wait for the
    // server's delayed acknowledgement, tens of milliseconds per call.
    const upstream = connect({ host: "127.0.0.1", port: serverPort, noDelay: true });
    client.setNoDelay(true);
    let connected = false;
    const established = () => {
      traceEvent(`sidecar ${this.port} tunnel to ${destination} open`);
      connected = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    };
    if (secret === undefined) upstream.once("connect", established);
    else
      upstream.once("connect", () =>
        void openPortTunnel(upstream, port, secret).then((opened) => {
          if (opened) return established();
          refuseTunnel(client);
          upstream.destroy();
        }),
      );
    // A server that answers before it has read a whole request (a refused upload) closes with the body
    // unread, which resets its connection: what it answered is still passed on, and what the caller
    // still sends is read and dropped (for a moment at most), so the caller gets to read the answer.
    const finish = () => {
      client.unpipe(upstream);
      client.on("data", () => undefined);
      client.resume();
      client.end();
      setTimeout(() => client.destroy(), TUNNEL_DRAIN_MS).unref();
    };
    upstream.once("error", () => {
      if (!connected) client.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      else finish();
    });
    client.once("error", () => upstream.destroy());
    client.once("close", () => upstream.destroy());
    upstream.once("close", finish);
  }
}

/** workerd reads a 400 to its CONNECT as "the container is not listening on that port". */
function refuseTunnel(client: Socket): void {
  client.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
}

/** Largest answer head the container server's tunnel route may give before the tunnel is refused. */
const MAX_TUNNEL_HEAD_BYTES = 16 * 1024;

/**
 * Asks the container server, on `upstream`, for a raw tunnel to `port` inside its sandbox
 * (PORT_PROXY_ROUTES.tunnel); true once it answered 101, with nothing of the port's bytes read yet
 * beyond its answer (any are put back). False when it refused (nothing listens there) or went away.
 */
function openPortTunnel(upstream: Socket, port: number, secret: string): Promise<boolean> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end === -1) {
        if (received.length > MAX_TUNNEL_HEAD_BYTES) done(false);
        return;
      }
      const opened = /^HTTP\/1\.1 101 /.test(received.subarray(0, end).toString("latin1"));
      const rest = received.subarray(end + 4);
      done(opened);
      if (opened && rest.length > 0) upstream.unshift(rest);
    };
    const done = (opened: boolean) => {
      upstream.off("data", onData);
      upstream.off("close", closed);
      upstream.pause();
      resolve(opened);
    };
    const closed = () => done(false);
    upstream.on("data", onData);
    upstream.once("close", closed);
    upstream.write(
      `GET ${PORT_PROXY_ROUTES.tunnel(port)} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${secret}\r\n` +
        `Connection: Upgrade\r\nUpgrade: ${PORT_PROXY_ROUTES.tunnelProtocol}\r\n\r\n`,
    );
  });
}

function answer(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}
