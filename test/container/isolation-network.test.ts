/**
 * The network of commands under bwrap: none at all unless allowed, and when allowed a network of the
 * sandbox's own that never reaches services on the host's loopback. Real servers, real sockets, real
 * namespaces; only loopback is used (the outside world is not assumed reachable).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findNetworkPrograms, NETWORK_PACKAGE } from "../../container/isolation/network.ts";
import { bwrapUnavailableReason, startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

const unavailable = bwrapUnavailableReason();
const programs = findNetworkPrograms();
const networkMissing = "missing" in programs ? programs.missing : undefined;
// In CI on Linux these tests must run: a missing slirp4netns there fails the run instead of skipping.
if (!unavailable && networkMissing && process.env.CI && process.platform === "linux") throw new Error(`slirp4netns is required in CI: ${networkMissing}`);
if (!unavailable && networkMissing) console.warn(`[isolation network tests] skipped: ${networkMissing}`);

/** Interfaces a command sees, from its own /proc/net/dev. */
const LIST_INTERFACES = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '";
/** Interfaces with a default route (destination 00000000), from its own /proc/net/route. */
const DEFAULT_ROUTES = "awk 'NR > 1 && $2 == \"00000000\" { print $1 }' /proc/net/route";
/** Serves and connects on the command's own 127.0.0.1, printing what came back. */
const OWN_LOOPBACK = `python3 -c '
import socket
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
client = socket.create_connection(server.getsockname(), timeout=5)
peer, _ = server.accept(); peer.sendall(b"own loopback"); peer.close()
print(client.recv(100).decode())
'`;

describe("finding the programs of a sandbox network", () => {
  it("names the package to install when slirp4netns is missing", () => {
    const empty = mkdtempSync(join(tmpdir(), "sandbox-nobin-"));
    try {
      expect(findNetworkPrograms([empty])).toEqual({ missing: `slirp4netns is not installed: apt-get install ${NETWORK_PACKAGE}` });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe.skipIf(unavailable !== undefined || networkMissing !== undefined)("the network of commands under bwrap", () => {
  let hostService: Server;
  let hostPort: number;
  const hostConnections: number[] = [];
  let offline: SandboxServer;
  let online: SandboxServer;

  beforeAll(async () => {
    hostService = createServer((socket) => {
      hostConnections.push(1);
      socket.end("hello from the host\n");
    });
    await new Promise<void>((resolve) => hostService.listen(0, "127.0.0.1", resolve));
    hostPort = (hostService.address() as { port: number }).port;
    offline = await startSandbox({ isolation: "bwrap" });
    online = await startSandbox({ isolation: "bwrap", allowNetwork: true });
  });

  afterAll(async () => {
    await offline?.close();
    await online?.close();
    await new Promise((resolve) => hostService?.close(resolve));
  });

  const connectToHost = () => `exec 3<>/dev/tcp/127.0.0.1/${hostPort} && head -n1 <&3`;

  it("the host's service is reachable from the host itself (the checks below are meaningful)", async () => {
    const { createConnection } = await import("node:net");
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = createConnection(hostPort, "127.0.0.1");
      let data = "";
      socket.on("data", (chunk) => (data += chunk));
      socket.on("end", () => resolve(data));
      socket.on("error", reject);
    });
    expect(reply).toBe("hello from the host\n");
    hostConnections.length = 0;
  });

  it("without network, a command sees no interface but lo and reaches nothing on the host", async () => {
    const interfaces = await offline.exec({ command: LIST_INTERFACES });
    expect(interfaces.body).toMatchObject({ exitCode: 0, stdout: "lo " });
    const cut = await offline.exec({ command: connectToHost() });
    expect(cut.body.exitCode).not.toBe(0);
    expect(hostConnections).toHaveLength(0);
    expect((await offline.get("/api/info")).body.isolation.allowNetwork).toBe(false);
  });

  it("with network, a command never reaches a service on the host's 127.0.0.1", async () => {
    const cut = await online.exec({ command: connectToHost() });
    expect(cut.body.exitCode).not.toBe(0);
    expect(cut.body.stdout).not.toContain("hello from the host");
    // Nor through the address slirp4netns gives the host side of the link.
    const viaGateway = await online.exec({ command: `exec 3<>/dev/tcp/10.0.2.2/${hostPort} && head -n1 <&3` });
    expect(viaGateway.body.exitCode).not.toBe(0);
    expect(hostConnections).toHaveLength(0);
    expect((await online.get("/api/info")).body.isolation.allowNetwork).toBe(true);
  });

  it("with network, a command has a loopback of its own and an interface with a default route", async () => {
    const loopback = await online.exec({ command: OWN_LOOPBACK });
    expect(loopback.body).toMatchObject({ exitCode: 0, stdout: "own loopback\n" });
    const interfaces = await online.exec({ command: LIST_INTERFACES });
    expect(interfaces.body.exitCode).toBe(0);
    const names = (interfaces.body.stdout as string).trim().split(" ");
    expect(names).toContain("lo");
    const outward = names.filter((name) => name !== "lo");
    expect(outward.length).toBeGreaterThan(0);
    const routes = await online.exec({ command: DEFAULT_ROUTES });
    expect(routes.body.exitCode).toBe(0);
    expect(outward).toContain((routes.body.stdout as string).trim());
  });

  it("commands of one sandbox share its network, as processes of one container do", async () => {
    const started = await online.post("/api/process/start", {
      command: `python3 -c '
import socket
server = socket.socket(); server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 47011)); server.listen(1); print("listening", flush=True)
peer, _ = server.accept(); peer.sendall(b"from the first command\\n"); peer.close()
'`,
    });
    expect(started.status).toBeLessThan(300);
    let reply = "";
    for (let attempt = 0; attempt < 50 && !reply.includes("from the first command"); attempt++) {
      const tried = await online.exec({ command: "exec 3<>/dev/tcp/127.0.0.1/47011 && head -n1 <&3" });
      reply = tried.body.stdout as string;
      if (!reply) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(reply).toBe("from the first command\n");
    // Another sandbox has a network of its own: the port is not there.
    expect((await offline.exec({ command: "exec 3<>/dev/tcp/127.0.0.1/47011" })).body.exitCode).not.toBe(0);
  });
});
