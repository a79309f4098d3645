/**
 * A server on loopback that stands for the internet in the egress tests of the Worker's outbound
 * handler (started by global-setup.ts): `/echo` answers with what it received (method, path,
 * headers, body), `/redirect?to=` sends elsewhere, `/bytes?n=` answers n bytes; a WebSocket
 * handshake is accepted, its first message says the headers it came with, then it echoes.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

/** The name the main runtime's test name map sends to this server on port 80 (global-setup.ts). */
export const EGRESS_TARGET_NAME = "target.test";

export async function startEgressTarget(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://target");
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (url.pathname === "/redirect") {
        res.writeHead(302, { location: url.searchParams.get("to") ?? "/" });
        res.end();
      } else if (url.pathname === "/bytes") {
        const n = Number(url.searchParams.get("n") ?? "0");
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(n) });
        res.end(Buffer.alloc(n, 120));
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ method: req.method, path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") }));
      }
    });
  });
  const sockets = new WebSocketServer({ server });
  sockets.on("connection", (socket, req) => {
    socket.send(JSON.stringify({ path: req.url, headers: req.headers }));
    socket.on("message", (data, binary) => socket.send(data, { binary }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      for (const client of sockets.clients) client.terminate();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
