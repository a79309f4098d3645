/**
 * The servers the egress benchmark reaches (an HTTP and an HTTPS one, on loopback), in a process of
 * their own so that serving does not share the runtime's event loop with the proxy it measures.
 * `/big` answers BENCH_DOWNLOAD_BYTES bytes; anything else "ok". Prints `{"http":port,"https":port}`.
 */
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttps } from "node:https";

const bytes = Number(process.env.BENCH_DOWNLOAD_BYTES);
const chunk = Buffer.alloc(1024 * 1024, 120);

function serve(req: IncomingMessage, res: ServerResponse): void {
  if (req.url !== "/big") {
    res.end("ok");
    return;
  }
  res.writeHead(200, { "content-length": String(bytes), "content-type": "application/octet-stream" });
  let sent = 0;
  const more = () => {
    while (sent < bytes) {
      const piece = Math.min(chunk.length, bytes - sent);
      sent += piece;
      if (!res.write(piece === chunk.length ? chunk : chunk.subarray(0, piece))) return void res.once("drain", more);
    }
    res.end();
  };
  more();
}

const http = createHttp(serve);
const https = createHttps({ key: process.env.BENCH_KEY, cert: process.env.BENCH_CERT }, serve);
const listen = (server: typeof http | typeof https) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
console.log(JSON.stringify({ http: await listen(http), https: await listen(https) }));
