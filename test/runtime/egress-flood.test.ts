/**
 * The egress proxy under a sandbox that tries to spend the runtime through it: from inside a real
 * sandbox, thousands of connections to an allowed host, held open; a hundred downloads of an endless
 * answer that the sandbox never reads. The runtime (this process) stays up with its memory bounded,
 * the sandbox holds no more than its cap of connections (the rest are reset, and said in its audit
 * trail in a few entries), another sandbox keeps working, and once the sandbox is destroyed no
 * connection of the proxy to the host remains in any state. Then a runtime of its own, killed
 * outright: nothing it started in a sandbox's namespace survives it, and nothing holds the namespace.
 */
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer as createHttp, type Server as HttpServer } from "node:http";
import { createServer as createTcp, type Server as TcpServer, type Socket } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditEntry } from "../../protocol/network.ts";
import { PROXY_LIMITS } from "../../runtime/egress/proxy-limits.ts";
import { RUNTIME_BUFFERS } from "../../runtime/egress/proxy-memory.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { call, eventually, runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";

const bwrap = detectIsolation().bwrap.available;
const CONNECTIONS = 3000;
const DOWNLOADS = 100;

let dataDir: DataDir;
let runtime: RunningRuntime;
/** Accepts and holds every connection, saying nothing and never closing its side. */
let hold: TcpServer;
const held = new Set<Socket>();
/** Answers every request with an endless body. */
let hose: TcpServer;
/** Says what it got once the client has ended its side, then ends its own. */
let late: TcpServer;
let lateClosed = 0;
let web: HttpServer;
const sandboxes = new Map<string, { url: string; secret: string }>();

const listenOn = async (server: TcpServer | HttpServer) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
};

async function startSandbox(key: string): Promise<void> {
  const started = await runtimeCall(runtime, "POST", `/containers/${key}/start`, { isolation: { allowNetwork: true } });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  sandboxes.set(key, { url: `http://127.0.0.1:${started.body.ports["3000"]}`, secret: started.body.secret });
}

async function sh(key: string, command: string, timeout = 30_000): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const sandbox = sandboxes.get(key)!;
  return (await call(sandbox.url, "POST", "/api/execute", { command, timeout }, sandbox.secret)).body;
}

async function audit(key: string): Promise<AuditEntry[]> {
  const all: AuditEntry[] = [];
  for (let since = 0; ; ) {
    const page = (await runtimeCall(runtime, "GET", `/containers/${key}/egress/audit?since=${since}`)).body as { entries: AuditEntry[]; next: number };
    if (page.entries.length === 0) return all;
    all.push(...page.entries);
    since = page.next;
  }
}

/** Connections of this machine to or from `port`, with their state (`ss`): the server's listener and TIME-WAIT (no process holds one) aside. */
function socketsOf(port: number): string[] {
  const out = execFileSync("ss", ["-Htan", "state", "all", `( dport = :${port} or sport = :${port} )`], { encoding: "utf8" });
  return out.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("TIME-WAIT") && !line.startsWith("LISTEN"));
}

/** Opens `n` connections to host:port and holds them; after a while, says how many were made, and how many are still open. */
const FLOOD = `
import resource, socket, sys, time
host, port, n, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
n = min(n, hard - 64)
address = socket.gethostbyname(host)
conns, failed = [], 0
for i in range(n):
    s = socket.socket(); s.settimeout(10)
    try:
        s.connect((address, port)); conns.append(s)
    except OSError:
        failed += 1; s.close()
time.sleep(3)
alive = 0
for s in conns:
    s.setblocking(False)
    try:
        alive += 1 if s.recv(1) else 0
    except BlockingIOError:
        alive += 1
    except OSError:
        pass
open(out, "w").write("%d %d %d %d\\n" % (n, len(conns), failed, alive))
time.sleep(600)
`.replace(/'/g, "'\\''");

/** Sends `n` requests for an endless answer and never reads one byte of them. */
const UNREAD = `
import socket, sys, time
host, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
conns = []
for i in range(n):
    s = socket.create_connection((host, 80), timeout=10)
    s.sendall(b"GET /endless HTTP/1.1\\r\\nHost: " + host.encode() + b"\\r\\n\\r\\n")
    conns.append(s)
open(out, "w").write("%d\\n" % len(conns))
time.sleep(600)
`.replace(/'/g, "'\\''");

/** Sends a message, ends its side (shutdown), and prints what comes back until the server ends. */
const HALF_CLOSE = `
import socket, sys
s = socket.create_connection((sys.argv[1], 7000), timeout=10)
s.sendall(b"hello"); s.shutdown(socket.SHUT_WR)
got = b""
while True:
    chunk = s.recv(4096)
    if not chunk: break
    got += chunk
print(got.decode())
`.replace(/'/g, "'\\''");

describe.skipIf(!bwrap)("a sandbox flooding the egress proxy", () => {
  beforeAll(async () => {
    hold = createTcp({ allowHalfOpen: true }, (socket) => {
      held.add(socket);
      socket.on("error", () => undefined);
      socket.once("close", () => held.delete(socket));
    });
    let sentEndless = 0;
    hose = createTcp((socket) => {
      socket.on("error", () => undefined);
      const block = Buffer.alloc(256 * 1024, 120);
      const pour = () => {
        while (!socket.destroyed && socket.write(block)) sentEndless += block.length;
      };
      socket.once("data", () => {
        socket.write("HTTP/1.1 200 OK\r\ncontent-length: 1000000000000\r\n\r\n");
        socket.on("drain", pour);
        pour();
      });
    });
    (hose as TcpServer & { sent(): number }).sent = () => sentEndless;
    web = createHttp((_req, res) => res.end("still here"));
    late = createTcp({ allowHalfOpen: true }, (socket) => {
      let got = "";
      socket.on("error", () => undefined);
      socket.on("data", (chunk: Buffer) => (got += chunk.toString()));
      socket.once("end", () => socket.end(`got ${got}, then your end`));
      socket.once("close", () => lateClosed++);
    });
    const [holdPort, hosePort, webPort, latePort] = [await listenOn(hold), await listenOn(hose), await listenOn(web), await listenOn(late)];
    dataDir = tempDataDir();
    runtime = await startRuntime({
      dataDir: dataDir.path,
      isolation: "bwrap",
      egressTestHosts: { hosts: { "hold.test:9000": `127.0.0.1:${holdPort}`, "hose.test:80": `127.0.0.1:${hosePort}`, "web.test:80": `127.0.0.1:${webPort}`, "late.test:7000": `127.0.0.1:${latePort}` } },
    });
    await startSandbox("flood-a");
    await startSandbox("flood-b");
  }, 90_000);

  afterAll(async () => {
    await runtime?.close();
    dataDir?.remove();
    for (const socket of held) socket.destroy();
    hold?.close();
    hose?.close();
    web?.close();
    late?.close();
  });

  it("holds no more than its cap of connections, stays up with its memory bounded, and serves other sandboxes", async () => {
    const before = process.memoryUsage();
    const holdPort = (hold.address() as { port: number }).port;
    const started = await sh("flood-a", `/usr/bin/python3 -c '${FLOOD}' hold.test 9000 ${CONNECTIONS} /tmp/flood.out >/dev/null 2>&1 & echo started`);
    expect(started.stdout.trim()).toBe("started");
    expect(await eventually(async () => (await sh("flood-a", "cat /tmp/flood.out 2>/dev/null")).stdout.trim() !== "", 120_000, 500)).toBe(true);
    const [tried, made, failed, alive] = (await sh("flood-a", "cat /tmp/flood.out")).stdout.trim().split(" ").map(Number);
    // The sandbox may open files enough for the flood (or its limit says how many it could try).
    expect(tried).toBeGreaterThan(PROXY_LIMITS.connectionsPerSandbox * 4);
    expect(made! + failed!).toBe(tried);
    // Every one past the cap was reset; the host holds exactly the cap.
    expect(alive).toBe(PROXY_LIMITS.connectionsPerSandbox);
    expect(await eventually(() => held.size === PROXY_LIMITS.connectionsPerSandbox, 10_000)).toBe(true);

    // Nothing of the flood is held per connection past the cap: the runtime's heap did not grow with it.
    const during = process.memoryUsage();
    expect(during.heapUsed + during.external - (before.heapUsed + before.external)).toBeLessThan(256 * 1024 * 1024);

    // The refusals are in the trail, in a few entries rather than one per connection.
    const refusals = (await audit("flood-a")).filter((entry) => entry.reason?.includes(`over the sandbox's ${PROXY_LIMITS.connectionsPerSandbox} connections`));
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.length).toBeLessThan(50);
    expect(refusals[0]).toMatchObject({ kind: "tcp", host: "hold.test", port: 9000, decision: "denied", rule: "proxy" });

    // Another sandbox is served meanwhile.
    const other = await sh("flood-b", "curl -sS -m 10 http://web.test/");
    expect(other.stdout).toBe("still here");

    // Destroyed: every connection of the proxy to the host is gone, none left half-closed.
    expect(socketsOf(holdPort).length).toBeGreaterThan(0);
    expect((await runtimeCall(runtime, "DELETE", "/containers/flood-a")).status).toBe(200);
    // Read from the host's connection table: a server that had the proxy's end of a connection before
    // its reset stops reading, and never hears of the reset (the kernel has closed it all the same).
    const socketsGone = await eventually(() => socketsOf(holdPort).length === 0, 10_000);
    expect(socketsGone, `${socketsOf(holdPort).length} sockets:\n${socketsOf(holdPort).slice(0, 5).join("\n")}`).toBe(true);
  }, 240_000);

  it("passes a half-close on: the server's answer after the sandbox ended its side still arrives, then both close", async () => {
    const before = lateClosed;
    const { stdout, stderr } = await sh("flood-b", `/usr/bin/python3 -c '${HALF_CLOSE}' late.test`);
    expect(stdout.trim(), stderr).toBe("got hello, then your end");
    expect(await eventually(() => lateClosed === before + 1, 5_000)).toBe(true);
    const latePort = (late.address() as { port: number }).port;
    expect(await eventually(() => socketsOf(latePort).length === 0, 5_000), socketsOf(latePort).join("\n")).toBe(true);
  });

  it("holds a bounded amount for downloads the sandbox never reads", async () => {
    await startSandbox("flood-c");
    const started = await sh("flood-c", `/usr/bin/python3 -c '${UNREAD}' hose.test ${DOWNLOADS} /tmp/unread.out >/dev/null 2>&1 & echo started`);
    expect(started.stdout.trim()).toBe("started");
    expect(await eventually(async () => (await sh("flood-c", "cat /tmp/unread.out 2>/dev/null")).stdout.trim() === String(DOWNLOADS), 60_000, 500)).toBe(true);
    const sent = (hose as TcpServer & { sent(): number }).sent;
    // The server pours far more than the proxy may hold; what the proxy holds stops growing near its share.
    expect(await eventually(() => sent() > 2 * PROXY_LIMITS.bufferedPerSandbox, 60_000)).toBe(true);
    // Past the share, each connection holds no more than its small allowance and the read that took
    // it past it; the share itself may be passed by the one large read claimed last before it was spent.
    // However busy the machine: reads are claimed before they come, and a connection stops reading
    // at once when it is past its allowance. That stays far below the old per-connection megabyte.
    const ceiling = PROXY_LIMITS.bufferedPerSandbox + PROXY_LIMITS.bufferedPerConnection + DOWNLOADS * 2 * PROXY_LIMITS.bufferedWhenOver;
    expect(ceiling).toBeLessThan(PROXY_LIMITS.bufferedPerSandbox + DOWNLOADS * PROXY_LIMITS.bufferedPerConnection);
    for (let i = 0; i < 10; i++) {
      expect(RUNTIME_BUFFERS.held).toBeLessThanOrEqual(ceiling);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(RUNTIME_BUFFERS.held).toBeGreaterThan(0);
    // The other sandbox is still served.
    expect((await sh("flood-b", "curl -sS -m 10 http://web.test/")).stdout).toBe("still here");
    expect((await runtimeCall(runtime, "DELETE", "/containers/flood-c")).status).toBe(200);
    expect(await eventually(() => RUNTIME_BUFFERS.held === 0, 10_000)).toBe(true);
  }, 180_000);
});

/** The network namespace a process is in, as the kernel names it (`net:[…]`). */
function netOf(pid: number | string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

/** Processes in namespace `net`, and processes holding a descriptor of it. */
function holdersOf(net: string): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let holds = netOf(entry) === net;
    if (!holds) {
      try {
        holds = readdirSync(`/proc/${entry}/fd`).some((fd) => {
          try {
            return readlinkSync(`/proc/${entry}/fd/${fd}`) === net;
          } catch {
            return false;
          }
        });
      } catch {
        holds = false;
      }
    }
    if (!holds) continue;
    let command = "?";
    try {
      command = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      // gone meanwhile
    }
    found.push({ pid: Number(entry), command });
  }
  return found;
}

describe.skipIf(!bwrap)("a runtime killed outright", () => {
  it("leaves no process in its sandboxes' namespaces, and nothing holding them", async () => {
    const dir = tempDataDir();
    const child = spawn(process.execPath, [fileURLToPath(new URL("../../runtime/main.ts", import.meta.url))], {
      env: { ...process.env, RUNTIME_PORT: "0", SANDBOX_DATA_DIR: dir.path, SANDBOX_ISOLATION: "bwrap", SANDBOX_WARM_POOL: "0" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      expect(await eventually(() => output.includes("its secret is in"), 20_000)).toBe(true);
      const url = /listening on (http:\/\/\S+)/.exec(output)![1]!;
      const secret = readFileSync(join(dir.path, "runtime.secret"), "utf8").trim();
      const started = await call(url, "POST", "/containers/crash-net/start", { isolation: { allowNetwork: true } }, secret);
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const inside = await call(`http://127.0.0.1:${started.body.ports["3000"]}`, "POST", "/api/execute", { command: "readlink /proc/self/ns/net" }, started.body.secret);
      const net = String(inside.body.stdout).trim();
      expect(net).toMatch(/^net:\[\d+\]$/);
      expect(net).not.toBe(netOf("self"));
      // The refusals' monitor runs there as the host's root, for as long as the sandbox is served.
      expect(await eventually(() => holdersOf(net).some((p) => / nft monitor$/.test(p.command) || p.command.endsWith("nft monitor")), 10_000)).toBe(true);

      child.kill("SIGKILL");
      expect(await eventually(() => holdersOf(net).length === 0, 15_000), JSON.stringify(holdersOf(net))).toBe(true);
    } finally {
      child.kill("SIGKILL");
      dir.remove();
    }
  }, 60_000);
});
