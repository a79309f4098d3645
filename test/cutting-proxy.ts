/**
 * A TCP proxy that breaks connections the way networks and proxies do, for tests of streams that
 * must survive it. It forwards bytes both ways unchanged and, on connections that carry an SSE
 * response, cuts the connection after a given number of response bytes (wherever that falls: in the
 * middle of an event, of a character, of an escape), or once the connection has been silent for a
 * while (a proxy's idle timeout). A cut destroys both sides, as a dropped connection does.
 *
 * It can also lose an answer: cut a connection after its request went on to the server and before
 * any byte of the answer reached the client — when the answer starts, or a while after the request
 * went on — which is what a retry after a dropped connection must survive.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export interface CuttingProxyOptions {
  /** Response bytes an event stream carries before the n-th cut (from 0); undefined: no more cuts. */
  cutAfterBytes?: (cut: number) => number | undefined;
  /** Only event streams whose request line matches are cut (default: every one). */
  cutRequests?: RegExp;
  /** Cut a connection silent both ways for this long. */
  idleCutMs?: number;
  /**
   * For the n-th connection (from 0): lose its answer. "at-answer" cuts when the answer's first
   * bytes arrive (none is passed on); a number cuts that many ms after the request's first bytes
   * went on, unless the answer came first. Undefined: leave it alone.
   */
  cutBeforeAnswer?: (connection: number) => "at-answer" | number | undefined;
}

export interface CuttingProxy {
  url: string;
  /** Connections cut so far (by bytes or by silence). */
  readonly cuts: number;
  readonly connections: number;
  close(): Promise<void>;
}

const EVENT_STREAM = "text/event-stream";

export async function startCuttingProxy(target: string, options: CuttingProxyOptions): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let cuts = 0;
  let connections = 0;

  const server: Server = createServer((client) => {
    const losing = options.cutBeforeAnswer?.(connections);
    connections++;
    let answered = false;
    let timed: NodeJS.Timeout | undefined;
    const upstream = connect(Number(port), hostname);
    open.add(client).add(upstream);
    let streaming = false;
    let sent = 0;
    let limit: number | undefined;
    let idle: NodeJS.Timeout | undefined;
    /** The request line of the last request the client sent on this connection. */
    let requestLine = "";
    const cut = () => {
      cuts++;
      clearTimeout(idle);
      client.destroy();
      upstream.destroy();
    };
    const touch = () => {
      if (options.idleCutMs === undefined) return;
      clearTimeout(idle);
      idle = setTimeout(cut, options.idleCutMs);
    };
    touch();
    client.on("data", (chunk: Buffer) => {
      touch();
      const head = chunk.toString("latin1", 0, Math.min(chunk.length, 512));
      if (/^[A-Z]+ \S+ HTTP\/1\.[01]\r\n/.test(head)) requestLine = head.slice(0, head.indexOf("\r\n"));
      upstream.write(chunk);
      if (typeof losing === "number" && timed === undefined) timed = setTimeout(() => answered || cut(), losing);
    });
    let cutting = false;
    upstream.on("data", (chunk: Buffer) => {
      if (cutting) return;
      if (losing === "at-answer") {
        cutting = true;
        cut();
        return;
      }
      answered = true;
      touch();
      if (!streaming && chunk.includes(EVENT_STREAM) && (options.cutRequests?.test(requestLine) ?? true)) {
        streaming = true;
        limit = options.cutAfterBytes?.(cuts);
        sent = 0;
      }
      if (streaming && limit !== undefined && sent + chunk.length >= limit) {
        cutting = true;
        upstream.pause();
        client.write(chunk.subarray(0, limit - sent), cut);
        return;
      }
      sent += chunk.length;
      if (!client.write(chunk)) {
        upstream.pause();
        client.once("drain", () => upstream.resume());
      }
    });
    const end = () => {
      clearTimeout(idle);
      clearTimeout(timed);
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    get cuts() {
      return cuts;
    },
    get connections() {
      return connections;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
