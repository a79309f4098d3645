/**
 * Gives a container's network namespace its one way out: the runtime's proxy. A helper is started in
 * that namespace alone (namespace-helper.ts, through nsenter: the host's users, processes and files,
 * so nothing in the sandbox can see or signal it; transparent-listener.pl makes its listener first),
 * sets the namespace up, and hands back the sockets the proxy serves on. It dies with the runtime
 * (runtime-bound.ts). Those sockets belong to the sandbox's namespace; the connections the proxy
 * makes on the sandbox's behalf are the runtime's own, from the host.
 *
 * Where the namespace's own network is is learned from a process inside it; a process that shares
 * the runtime's namespace (it died and its pid was taken, or it never had one of its own) is refused
 * before anything is changed.
 */
import { spawn } from "node:child_process";
import type { Socket as DatagramSocket } from "node:dgram";
import { readlinkSync } from "node:fs";
import type { Server } from "node:net";
import { fileURLToPath } from "node:url";
import { boundToRuntime } from "./runtime-bound.ts";

const HELPER = fileURLToPath(new URL("./namespace-helper.ts", import.meta.url));
const LISTENER = fileURLToPath(new URL("./transparent-listener.pl", import.meta.url));
const SETUP_TIMEOUT_MS = 15_000;

export interface NamespaceSockets {
  /** Every outbound TCP connection of the sandbox arrives here, its destination its local address (original-destination.ts). */
  tcp: Server;
  /** The sandbox's resolver (udp 10.0.2.3:53 inside). */
  dns: DatagramSocket;
  /** The listener's port inside the namespace (a connection *to* it is no connection out). */
  port: number;
}

/** What the setup needs from the machine. */
export interface NamespaceTools {
  nsenter: string;
  node: string;
  /** Gives what runs in the namespace a parent-death signal (runtime-bound.ts). */
  setpriv: string;
  /** Makes the transparent listener, which Node cannot. */
  perl: string;
}

export async function openNamespace(tools: NamespaceTools, pid: number): Promise<NamespaceSockets> {
  const own = readlinkSync("/proc/self/ns/net");
  const theirs = readlinkSync(`/proc/${pid}/ns/net`);
  if (own === theirs) throw new Error(`process ${pid} shares the runtime's network namespace: it is not a container's`);
  // A root runtime may enter the namespace directly; another user enters the sandbox's user namespace first (it owns both).
  const userArgs = process.getuid?.() === 0 ? [] : [`--user=/proc/${pid}/ns/user`, "--preserve-credentials"];
  const [command, ...args] = [tools.nsenter, ...userArgs, `--net=/proc/${pid}/ns/net`, "--", ...boundToRuntime(tools.setpriv, [tools.perl, LISTENER, tools.node, HELPER, own])];
  const child = spawn(command!, args, {
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  let said = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    if (said.length < 2000) said += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    let tcp: { server: Server; port: number } | undefined;
    const timer = setTimeout(() => fail(`did not finish within ${SETUP_TIMEOUT_MS} ms`), SETUP_TIMEOUT_MS);
    function fail(why: string): void {
      clearTimeout(timer);
      child.kill("SIGKILL");
      tcp?.server.close();
      reject(new Error(`the sandbox's network could not be set up: ${why}${said ? `: ${said.trim()}` : ""}`));
    }
    child.on("message", (message: { kind?: string; port?: number }, handle: unknown) => {
      if (message.kind === "tcp" && typeof message.port === "number") tcp = { server: handle as Server, port: message.port };
      else if (message.kind === "dns" && tcp) {
        clearTimeout(timer);
        resolve({ tcp: tcp.server, port: tcp.port, dns: handle as DatagramSocket });
      }
    });
    child.once("error", (error) => fail(`nsenter failed to start (${error.message})`));
    child.once("exit", (code, signal) => {
      if (code !== 0) fail(`the setup exited (${signal ?? `code ${code}`})`);
    });
  });
}
