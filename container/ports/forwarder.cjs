/**
 * The port forwarder: runs inside the sandbox's network namespace (entered with nsenter), where the
 * sandbox's servers listen on 127.0.0.1, and listens on a unix socket in the container server's
 * private state directory (a file: it crosses network namespaces). The server, outside, reaches a
 * port of the sandbox through it.
 *
 * The protocol of one connection: the server writes the port as a line (`8080\n`); the forwarder
 * connects to 127.0.0.1 at that port and answers `OK\n`, or `ERR <code>\n` and closes (nothing
 * listens: `ERR ECONNREFUSED`); after `OK` the bytes flow both ways untouched.
 *
 * argv: the socket path. It exits when its stdin (a pipe from the server) closes, so a server that is
 * killed outright does not leave it behind. Plain CommonJS with no dependencies: it starts fast and
 * runs as it is, from the sources or from a compiled tree.
 */
"use strict";
const net = require("node:net");
const { connectLoopback } = require("./loopback.cjs");
const fs = require("node:fs");

const socketPath = process.argv[2];
const MAX_LINE = 16;

function serve(client) {
  let line = "";
  const onData = (chunk) => {
    line += chunk.toString("latin1");
    const end = line.indexOf("\n");
    if (end === -1) {
      if (line.length > MAX_LINE) client.destroy();
      return;
    }
    client.off("data", onData);
    client.pause();
    const port = Number(line.slice(0, end));
    const rest = Buffer.from(line.slice(end + 1), "latin1");
    if (!Number.isInteger(port) || port < 1 || port > 65535) return void client.end("ERR EINVAL\n");
    connectLoopback(port, (error, target) => {
      if (error) return void client.end(`ERR ${error.code || "EIO"}\n`);
      target.on("error", () => client.destroy());
      client.on("error", () => target.destroy());
      client.write("OK\n");
      if (rest.length > 0) target.write(rest);
      client.pipe(target);
      target.pipe(client);
      client.resume();
    });
  };
  client.on("data", onData);
  client.on("error", () => undefined);
}

try {
  fs.rmSync(socketPath, { force: true });
} catch {}
const server = net.createServer({ noDelay: true }, serve);
server.listen(socketPath, () => {
  fs.chmodSync(socketPath, 0o600);
  process.stdout.write("ready\n");
});
server.on("error", (error) => {
  process.stderr.write(`port forwarder: ${error.message}\n`);
  process.exit(1);
});
process.stdin.on("data", () => undefined);
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
