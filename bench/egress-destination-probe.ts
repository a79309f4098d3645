/**
 * Run by egress-destination.ts in a network namespace of its own (unshare -n, as root): holds
 * `held` loopback connections with connection tracking on, then times the two ways of finding where
 * an accepted connection was going, and prints the figures as JSON.
 *   - the old way: the namespace's whole conntrack table read as text, and searched for the entry
 *     whose reply side names the accepted connection's peer (what the proxy did before TPROXY);
 *   - the accepted socket's own local address (what the proxy does now, the connection handed over
 *     untranslated).
 * argv: <held connections> <lookups>
 */
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";

const held = Number(process.argv[2]);
const lookups = Number(process.argv[3]);

// Any ruleset that matches on ct state turns tracking on in the namespace.
const setup = [
  spawnSync("ip", ["link", "set", "lo", "up"]),
  spawnSync("nft", ["-f", "-"], { input: "table inet probe {\n chain out {\n  type filter hook output priority 0;\n  ct state new accept\n }\n}\n" }),
];
if (setup.some((step) => step.status !== 0)) throw new Error(`the namespace was not set up: ${setup.map((step) => String(step.stderr)).join(" ")}`);

const accepted: Socket[] = [];
const server = createServer((socket) => accepted.push(socket));
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as { port: number }).port;
const clients: Socket[] = [];
for (let i = 0; i < held; i++) {
  const client = connect(port, "127.0.0.1");
  await new Promise((resolve) => client.once("connect", resolve));
  clients.push(client);
}
while (accepted.length < held) await new Promise((resolve) => setTimeout(resolve, 10));

/** The old lookup, as it was: the whole table as text, line by line. */
async function fromConntrack(peer: { address: string; port: number }): Promise<string | undefined> {
  const table = await readFile("/proc/self/net/nf_conntrack", "utf8");
  const reply = ` src=127.0.0.1 dst=${peer.address} sport=${port} dport=${peer.port} `;
  for (const line of table.split("\n")) {
    if (!line.includes(" tcp ") || !line.includes(reply)) continue;
    return / src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+) /.exec(line)?.[2];
  }
  return undefined;
}

const timings = { conntrack: [] as number[], localAddress: [] as number[] };
let found = 0;
for (let i = 0; i < lookups; i++) {
  const socket = accepted[i % accepted.length]!;
  const started = process.hrtime.bigint();
  if (await fromConntrack({ address: socket.remoteAddress!, port: socket.remotePort! })) found++;
  timings.conntrack.push(Number(process.hrtime.bigint() - started) / 1e3);
}
// A fresh socket for each (the address is asked of the kernel once per socket, then kept).
for (let i = 0; i < lookups; i++) {
  const client = connect(port, "127.0.0.1");
  const socket = await new Promise<Socket>((resolve) => server.once("connection", resolve));
  const started = process.hrtime.bigint();
  if (socket.localAddress && socket.localPort) found++;
  timings.localAddress.push(Number(process.hrtime.bigint() - started) / 1e3);
  socket.destroy();
  client.destroy();
}
const heap = process.memoryUsage().heapUsed;
process.stdout.write(JSON.stringify({ held, found, timings, heap }) + "\n");
process.exit(0);
