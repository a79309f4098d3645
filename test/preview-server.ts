/**
 * A small web server the preview-port tests and benchmark run inside a sandbox (`node <file> [port] [host]`,
 * port 0: any free one, host 127.0.0.1 unless given; it prints `listening <port>`). Plain CommonJS with no dependencies, as a
 * string so the workers tests can write it into a sandbox too.
 *
 *   GET  /info            JSON: the method, path, query and headers it was asked with
 *   POST /echo            the request body back, each chunk as it arrives
 *   GET  /drip?n=&ms=     n lines, `ms` apart (a response that streams)
 *   GET  /bytes?size=     `size` bytes (for throughput)
 *   GET  /reply?status=&h=name:value  an answer with that status (200) and those headers (`h` repeats)
 *   any upgrade           a WebSocket that echoes text and binary messages
 */
export const PREVIEW_SERVER_SOURCE = String.raw`
"use strict";
const http = require("node:http");
const crypto = require("node:crypto");

const block = Buffer.alloc(64 * 1024, 120);

const server = http.createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  if (url.pathname === "/echo") {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.flushHeaders();
    req.on("data", (chunk) => res.write(chunk));
    req.on("end", () => res.end());
    return;
  }
  if (url.pathname === "/drip") {
    const n = Number(url.searchParams.get("n") || 3);
    const ms = Number(url.searchParams.get("ms") || 200);
    res.writeHead(200, { "content-type": "text/plain" });
    res.flushHeaders();
    let i = 0;
    const tick = () => {
      res.write("drip-" + ++i + "\n");
      if (i >= n) return res.end();
      setTimeout(tick, ms);
    };
    tick();
    return;
  }
  if (url.pathname === "/bytes") {
    let left = Number(url.searchParams.get("size") || 0);
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(left) });
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, block.length);
        left -= n;
        if (!res.write(n === block.length ? block : block.subarray(0, n))) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
    return;
  }
  if (url.pathname === "/reply") {
    req.resume();
    const headers = url.searchParams.getAll("h").map((line) => [line.slice(0, line.indexOf(":")).trim(), line.slice(line.indexOf(":") + 1).trim()]);
    res.writeHead(Number(url.searchParams.get("status") || 200), Object.fromEntries(headers));
    res.end("reply");
    return;
  }
  req.resume();
  req.on("end", () => {
    const body = JSON.stringify({ method: req.method, path: url.pathname, query: url.search, headers: req.headers });
    res.writeHead(200, { "content-type": "application/json", "set-cookie": "app=1; Path=/" });
    res.end(body);
  });
});

server.on("upgrade", (req, socket) => {
  const key = req.headers["sec-websocket-key"];
  const accept = crypto.createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
  socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + "\r\n\r\n");
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (buffered.length < 2) return;
      const opcode = buffered[0] & 15;
      let length = buffered[1] & 127;
      let at = 2;
      if (length === 126) { if (buffered.length < 4) return; length = buffered.readUInt16BE(2); at = 4; }
      else if (length === 127) { if (buffered.length < 10) return; length = Number(buffered.readBigUInt64BE(2)); at = 10; }
      const masked = (buffered[1] & 128) !== 0;
      const mask = masked ? buffered.subarray(at, at + 4) : null;
      if (masked) at += 4;
      if (buffered.length < at + length) return;
      const payload = Buffer.from(buffered.subarray(at, at + length));
      buffered = buffered.subarray(at + length);
      if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      if (opcode === 8) { socket.end(Buffer.from([0x88, 0])); return; }
      if (opcode === 9) { socket.write(frame(10, payload)); continue; }
      if (opcode === 1 || opcode === 2) socket.write(frame(opcode, opcode === 1 ? Buffer.from("echo:" + payload.toString()) : payload));
    }
  });
  socket.on("error", () => {});
});

function frame(opcode, payload) {
  const head = payload.length < 126 ? Buffer.from([128 | opcode, payload.length])
    : payload.length < 65536 ? Buffer.from([128 | opcode, 126, payload.length >> 8, payload.length & 255])
    : (() => { const h = Buffer.alloc(10); h[0] = 128 | opcode; h[1] = 127; h.writeBigUInt64BE(BigInt(payload.length), 2); return h; })();
  return Buffer.concat([head, payload]);
}

server.listen(Number(process.argv[2] || 0), process.argv[3] || "127.0.0.1", () => console.log("listening " + server.address().port));
`;
