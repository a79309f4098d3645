/**
 * Run inside a sandbox's network namespace (and only its network namespace: the host's users,
 * processes and files), by the runtime through nsenter. It gives the namespace its one way out,
 * which is the runtime's proxy, and hands the runtime the sockets that way consists of:
 *   - loopback gets the sandbox's address and a default route, so a connect to any address is made
 *     at all (then redirected) instead of failing with "network unreachable";
 *   - a TCP listener on loopback, which every outbound TCP connection is redirected to (nftables),
 *     and a UDP socket on the resolver address the container's resolv.conf names;
 *   - nftables (firewall-table.ts): TCP to anywhere but the namespace itself goes to the listener;
 *     every other packet leaving for elsewhere (UDP but DNS, ICMP, raw) is rejected at once, so it
 *     fails fast; the policy's chain, before the redirect, starts empty (the runtime fills it).
 * The sockets go to the runtime over the IPC channel; this process then exits. Nothing of the
 * runtime's stays in the namespace but those two sockets, which the sandbox can use, never read.
 *
 * argv: <the listener's descriptor> <the runtime's own network namespace, as readlink shows it>.
 * Entering the wrong namespace (the host's) would redirect the machine's own traffic: the helper
 * refuses to touch that one. A runtime that goes away before the sockets are handed over takes the
 * helper with it (the IPC channel closes).
 */
import { spawnSync } from "node:child_process";
import { createSocket } from "node:dgram";
import { readlinkSync } from "node:fs";
import { createServer } from "node:net";
import { baseTable, PROXY_ROUTE } from "./firewall-table.ts";
import { NAMESPACE_ADDRESSES } from "./namespace-addresses.ts";

const orphaned = () => process.exit(5);
process.once("disconnect", orphaned);
const listenerFd = Number(process.argv[2]);
const hostNamespace = process.argv[3];
const own = readlinkSync("/proc/self/ns/net");
if (!hostNamespace || own === hostNamespace) {
  console.error(`egress: refusing to configure network namespace ${own}: it is the runtime's own`);
  process.exit(2);
}

function run(command: string, args: string[], input?: string): void {
  const result = spawnSync(command, args, { input, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")}: ${(result.stderr || result.error?.message || `exit ${result.status}`).trim()}`);
}

const { sandbox, resolver } = NAMESPACE_ADDRESSES;
try {
  run("ip", ["link", "set", "lo", "up"]);
  run("ip", ["addr", "add", `${sandbox}/32`, "dev", "lo"]);
  run("ip", ["addr", "add", `${resolver}/32`, "dev", "lo"]);
  run("ip", ["route", "add", "default", "dev", "lo", "src", sandbox]);
  run("ip", ["rule", "add", "fwmark", String(PROXY_ROUTE.mark), "lookup", String(PROXY_ROUTE.table)]);
  run("ip", ["route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", String(PROXY_ROUTE.table)]);
} catch (error) {
  console.error(`egress: ${(error as Error).message}`);
  process.exit(3);
}

const listener = createServer({ pauseOnConnect: true });
listener.once("error", fail);
listener.listen({ fd: listenerFd }, () => {
  const port = (listener.address() as { port: number }).port;
  const dns = createSocket("udp4");
  dns.once("error", fail);
  dns.bind(53, resolver, () => {
    try {
      run("nft", ["-f", "-"], baseTable(port));
    } catch (error) {
      fail(error as Error);
    }
    process.send!({ kind: "tcp", port }, listener);
    process.send!({ kind: "dns" }, dns as never, () => {
      process.off("disconnect", orphaned);
      process.disconnect();
      process.exit(0);
    });
  });
});

function fail(error: Error): void {
  console.error(`egress: ${error.message}`);
  process.exit(4);
}
