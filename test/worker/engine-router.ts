/**
 * The Docker socket the workers pool's workerd dials (workerd-on-engine.sh) and the runtime API the
 * Worker's runtime channel calls, in front of the test runtimes: each Docker call goes to the engine
 * of the runtime its Durable Object was sent to (by the object's id, which workerd puts in every
 * container's name), each runtime call about a sandbox (`/containers/<key>…`) to that runtime, and
 * everything else to the main runtime. So a test can run one sandbox through a runtime with other
 * operator settings (no bubblewrap, a bwrap floor, one sandbox at most, empty workspaces), or with
 * its runtime gone, while workerd's own container client and the Durable Object make every call as
 * they do for any sandbox.
 *
 * Tests choose over HTTP on loopback: `PUT /routes/<object id hex>?key=<sandbox key>` with the
 * runtime's name as body ("none": every connection is closed at once, as a runtime that is not there).
 */
import { createServer as createHttpServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, createServer, type Socket } from "node:net";
import { rmSync } from "node:fs";

export interface EngineRouter {
  /** The socket workerd dials. */
  readonly path: string;
  /** Where tests choose a route. */
  readonly controlUrl: string;
  /** The runtime API in front of the runtimes (the Worker's SANDBOX_CONTAINER_URL). */
  readonly apiUrl: string;
  close(): Promise<void>;
}

const OBJECT_ID = /([0-9a-f]{64})(?:-proxy)?(?:[/?&\s]|$)/;
const MAX_HEAD_BYTES = 64 * 1024;

export interface RoutedRuntime {
  /** Its engine's socket path. */
  engine: string;
  /** Its API's URL. */
  url: string;
}

async function listenOnLoopback(server: ReturnType<typeof createHttpServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
}

/** `runtimes` by name; `main`: the one calls go to unless a route says otherwise. */
export async function startEngineRouter(path: string, runtimes: Record<string, RoutedRuntime>, main: string): Promise<EngineRouter> {
  const routes = new Map<string, string>();
  const keyRoutes = new Map<string, string>();
  const server = createServer((client) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n");
      if (end < 0 && head.length < MAX_HEAD_BYTES) return;
      client.off("data", onData);
      client.pause();
      const requestLine = head.subarray(0, end < 0 ? head.length : end).toString("latin1");
      const id = OBJECT_ID.exec(decodeURIComponent(requestLine.split(" ")[1] ?? ""))?.[1];
      const name = (id && routes.get(id)) ?? main;
      const target = runtimes[name]?.engine;
      if (!target) return void client.destroy();
      const upstream: Socket = connect(target, () => {
        upstream.write(head);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    };
    client.on("data", onData);
    client.on("error", () => undefined);
  });
  rmSync(path, { force: true });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(path, resolve));

  const control = createHttpServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://router");
    const id = /^\/routes\/([0-9a-f]{64})$/.exec(url.pathname)?.[1];
    const key = url.searchParams.get("key");
    if (req.method !== "PUT" || !id || !key) return void res.writeHead(404).end();
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk));
    req.on("end", () => {
      if (body !== "none" && !(body in runtimes)) return void res.writeHead(400).end(`no runtime named ${body}`);
      routes.set(id, body);
      keyRoutes.set(key, body);
      res.writeHead(204).end();
    });
  });
  const controlUrl = await listenOnLoopback(control);

  const api = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    const key = /^\/containers\/([^/?]+)/.exec(req.url ?? "")?.[1];
    const target = runtimes[(key && keyRoutes.get(decodeURIComponent(key))) ?? main];
    if (!target) return void req.socket.destroy();
    const upstream = request(new URL(req.url ?? "/", target.url), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  // An upgrade (a WebSocket the Worker's outbound handler has the runtime carry) goes to the same runtime, byte for byte.
  api.on("upgrade", (req: IncomingMessage, client: Socket, head: Buffer) => {
    const key = /^\/containers\/([^/?]+)/.exec(req.url ?? "")?.[1];
    const target = new URL(runtimes[(key && keyRoutes.get(decodeURIComponent(key))) ?? main]?.url ?? "http://0.0.0.0");
    const upstream = connect(Number(target.port), target.hostname, () => {
      const fields = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) fields.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${fields.join("\r\n")}\r\n\r\n`);
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
    client.once("close", () => upstream.destroy());
  });
  const apiUrl = await listenOnLoopback(api);
  return {
    path,
    controlUrl,
    apiUrl,
    async close() {
      for (const server of [control, api]) {
        server.close();
        server.closeAllConnections();
      }
      await new Promise((resolve) => server.close(resolve));
      rmSync(path, { force: true });
    },
  };
}
