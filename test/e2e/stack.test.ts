/**
 * End to end: `npm start`'s stack (scripts/start.ts → local runtime + wrangler dev) on free ports,
 * driven over HTTP like a user with curl would, then stopped with one SIGINT (Ctrl-C).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSseStream } from "../../protocol/sse.ts";
import { getHttpSandbox } from "../../src/client/http.ts";
import type { OutputChunk } from "../../src/client/api.ts";
import { freePort } from "../../runtime/ports.ts";
import { startCuttingProxy } from "../cutting-proxy.ts";
import { loopback, previewFetch } from "../preview-fetch.ts";
import { PREVIEW_SERVER_SOURCE } from "../preview-server.ts";
import WebSocket from "ws";

const root = fileURLToPath(new URL("../..", import.meta.url));
// Unique per run: the test looks for it on every command line of the machine.
const token = `e2e-token-${randomBytes(12).toString("hex")}`;
let stack: ChildProcess;
let url: string;
let output = "";
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "sandbox-e2e-"));
  // Sandbox containers run as other host users: they pass through (never list) the folder to their own.
  chmodSync(dataDir, 0o711);
  const port = await freePort();
  stack = spawn(process.execPath, [join(root, "scripts/start.ts")], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      SANDBOX_API_TOKEN: token,
      SANDBOX_DATA_DIR: join(dataDir, "sandboxes"),
      WRANGLER_PERSIST_TO: join(dataDir, "state"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  stack.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  stack.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start not ready in time:\n${output}`)), 100_000);
    const check = () => {
      if (output.includes("Sandbox service ready")) {
        clearTimeout(timer);
        resolve();
      }
    };
    stack.stdout!.on("data", check);
    stack.once("exit", (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
  });
  url = `http://127.0.0.1:${port}`;
}, 120_000);

afterAll(async () => {
  if (stack && stack.exitCode === null) {
    const exited = new Promise((resolve) => stack.once("exit", resolve));
    stack.kill("SIGKILL");
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${token}` };

/** Every descendant of `root`, from /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) for (const child of children.get(queue.shift()!) ?? []) out.push(child), queue.push(child);
  return out;
}

/** TCP ports (v4 and v6) in LISTEN state whose sockets belong to one of `pids`. */
function listeningPortsOf(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match) inodes.add(match[1]!);
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local address, state 0A = LISTEN, inode in field 9.
      if (fields[3] === "0A" && inodes.has(fields[9]!)) ports.add(Number.parseInt(fields[1]!.split(":")[1]!, 16));
    }
  }
  return [...ports];
}

/** Resident memory of a process, in bytes (VmRSS). */
function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? 0) * 1024;
}

/** Runs `work` while sampling each process's RSS; resolves with how far each rose above where it started. */
async function rssGrowth<T>(pids: number[], work: () => Promise<T>): Promise<{ result: T; growth: number[] }> {
  const base = pids.map(rssOf);
  const peak = [...base];
  const timer = setInterval(() => pids.forEach((pid, i) => (peak[i] = Math.max(peak[i]!, rssOf(pid)))), 25);
  try {
    const result = await work();
    return { result, growth: peak.map((value, i) => value - base[i]!) };
  } finally {
    clearInterval(timer);
  }
}

describe("durable workspaces under npm start", () => {
  const MB = 1024 * 1024;

  it("a 200 MB workspace saves to the local R2 bucket and restores in bounded memory", async () => {
    const sandbox = getHttpSandbox("e2e-durable", { url, token });
    await sandbox.configure({ persistence: { onSleep: "none" } });
    // Random bytes: gzip cannot shrink them, so the archive is as large as the workspace.
    const made = await sandbox.exec("head -c 200M /dev/urandom > big.bin && sha256sum big.bin", { timeout: 60_000 });
    const hash = made.stdout;
    // Read through the service's root: sandboxes' disks are mounted in its own mount namespace.
    const serverPid = Number(readFileSync(join(`/proc/${stack.pid}/root`, dataDir, "sandboxes", "e2e-durable", "container.pid"), "utf8").split("\n")[0]);
    const workerd = descendants(stack.pid!).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd";
      } catch {
        return false;
      }
    });
    expect(workerd.length).toBeGreaterThanOrEqual(1);
    const watched = [serverPid, ...workerd];

    // One round first: workerd's heap grows to its working size on the first archive through the
    // local R2 simulation and stays there; the round after shows whether anything holds an archive.
    const warm = await sandbox.createBackup({ name: "warm-up" });
    await sandbox.restoreBackup(warm.id);
    await sandbox.deleteBackup(warm.id);

    const saved = await rssGrowth(watched, () => sandbox.createBackup({ name: "big" }));
    expect(saved.result.size).toBeGreaterThan(200 * MB);
    const restored = await rssGrowth(watched, async () => {
      await sandbox.exec("rm big.bin");
      return sandbox.restoreBackup(saved.result.id);
    });
    expect(restored.result.backup.id).toBe(saved.result.id);
    expect((await sandbox.exec("sha256sum big.bin", { timeout: 60_000 })).stdout).toBe(hash);
    // Well below the archive's 200 MB in every process on the way: it only ever passes through in parts.
    const [serverSave, ...workerdSave] = saved.growth;
    const [serverRestore, ...workerdRestore] = restored.growth;
    expect(serverSave).toBeLessThan(32 * MB);
    expect(serverRestore).toBeLessThan(32 * MB);
    for (const growth of [...workerdSave, ...workerdRestore]) expect(growth).toBeLessThan(100 * MB);

    // The same through the durable workspace: destroyed with keep, back on the next command.
    await sandbox.destroy({ keep: true });
    expect((await sandbox.exec("sha256sum big.bin", { timeout: 60_000 })).stdout).toBe(hash);
    // The bucket lives in wrangler's local state folder.
    const sizes = execFileSync("find", [join(dataDir, "state"), "-path", "*r2*", "-type", "f", "-printf", "%s\\n"], { encoding: "utf8" });
    expect(sizes.split("\n").reduce((sum, line) => sum + Number(line || 0), 0)).toBeGreaterThan(300 * MB);
    await sandbox.deleteBackup(saved.result.id);
    await sandbox.destroy();
    // A 200 MB archive is compressed and moved six times, each at what a busy machine leaves it.
  }, 600_000);
});

describe("npm start", () => {
  it("prints the URL and the token", () => {
    expect(output).toContain(url);
    expect(output).toContain(token);
  });

  it("keeps the token off every command line, and opens no inspector", async () => {
    const withToken = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(token);
        } catch {
          return false;
        }
      });
    expect(withToken).toEqual([]);
    // No port the stack listens on speaks the DevTools protocol (an inspector reads every binding).
    const ports = listeningPortsOf([stack.pid!, ...descendants(stack.pid!)]);
    expect(ports).toContain(Number(new URL(url).port));
    const inspectors = [];
    for (const port of ports) {
      const answer = await fetch(`http://127.0.0.1:${port}/json/version`, { signal: AbortSignal.timeout(2_000) })
        .then((response) => response.text())
        .catch(() => "");
      if (/webSocketDebuggerUrl|Protocol-Version/i.test(answer)) inspectors.push(port);
    }
    expect(inspectors).toEqual([]);
  });

  it("refuses requests without the token", async () => {
    const response = await fetch(`${url}/v1/sandboxes/e2e/exec`, { method: "POST", body: JSON.stringify({ command: "true" }) });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("runs a command and streams its output as SSE (curl -N)", async () => {
    const buffered = await fetch(`${url}/v1/sandboxes/e2e/exec`, { method: "POST", headers: auth, body: JSON.stringify({ command: "echo hi; pwd" }) });
    expect(await buffered.json()).toMatchObject({ success: true, stdout: "hi\n/workspace\n" });

    const streamed = await fetch(`${url}/v1/sandboxes/e2e/exec/stream`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ command: "for i in 1 2 3; do echo tick $i; sleep 0.1; done" }),
    });
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    const events = [];
    for await (const message of readSseStream(streamed.body!)) events.push({ event: message.event, data: JSON.parse(message.data) });
    expect(events[0]?.event).toBe("start");
    expect(events.at(-1)).toMatchObject({ event: "complete", data: { exitCode: 0 } });
    expect(events.filter((e) => e.event === "stdout").map((e) => e.data.data).join("")).toBe("tick 1\ntick 2\ntick 3\n");
  });

  it("starts a background process and follows its log, resuming with Last-Event-ID", async () => {
    const started = await fetch(`${url}/v1/sandboxes/e2e/processes`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ command: "for i in 1 2 3 4; do echo line $i; sleep 0.1; done", processId: "bg" }),
    });
    expect(started.status).toBe(201);
    const follow = async (lastEventId?: string) => {
      const response = await fetch(`${url}/v1/sandboxes/e2e/processes/bg/logs/stream`, {
        headers: { ...auth, ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
      });
      const out = [];
      for await (const message of readSseStream(response.body!)) out.push(message);
      return out;
    };
    const all = await follow();
    expect(all.map((m) => m.event).slice(-2)).toEqual(["status", "exit"]);
    const resumed = await follow(all[1]!.id);
    expect(resumed.map((m) => m.id)).toEqual(all.slice(2).map((m) => m.id));
  });

  it("works with the HTTP client", async () => {
    const sandbox = getHttpSandbox("e2e-client", { url, token });
    const process = await sandbox.startProcess("echo ready; sleep 30");
    await process.waitForLog("ready", 20_000);
    await process.kill();
    await expect(process.waitForExit(20_000)).resolves.toMatchObject({ status: "killed" });
    expect((await sandbox.exec("echo done")).stdout).toBe("done\n");
  });

  it("serves a preview port of a confined sandbox through wrangler dev: token, then cookie, then a WebSocket", async () => {
    const sandbox = getHttpSandbox("e2e-ports", { url, token });
    await sandbox.writeFile("preview-server.cjs", PREVIEW_SERVER_SOURCE);
    const server = await sandbox.startProcess("exec node preview-server.cjs 0");
    const { match } = await server.waitForLog(/listening (\d+)/, 20_000);
    const port = Number((match as RegExpMatchArray)[1]);
    const exposed = await sandbox.exposePort(port);
    // An origin of the port's own: <port>-<id>.localhost on the Worker's port (curl and browsers resolve it to loopback).
    const host = `${port}-e2e-ports.localhost:${new URL(url).port}`;
    expect(exposed.url.startsWith(`http://${host}/?token=`)).toBe(true);

    expect((await previewFetch(exposed.url.replace(/\?token=.*$/, "info"))).status).toBe(401);
    expect((await previewFetch(exposed.url.replace("/?token=", "/info?token="))).status).toBe(200);
    const first = await previewFetch(exposed.url, { headers: { "sec-fetch-dest": "document" } }); // as a browser opening the page
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("/");
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    const page = await previewFetch(`http://${host}/info`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.json()).toMatchObject({ path: "/info", headers: { "x-forwarded-prefix": "", "x-forwarded-host": host } });

    const echoed = await new Promise<string>((resolve, reject) => {
      const socket = new WebSocket(`ws://${host}/socket`, { headers: { cookie }, lookup: loopback as never });
      socket.on("open", () => socket.send("through-wrangler"));
      socket.on("message", (data) => {
        resolve(data.toString());
        socket.close();
      });
      socket.on("error", reject);
      socket.on("unexpected-response", (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    });
    expect(echoed).toBe("echo:through-wrangler");
    await sandbox.unexposePort(port);
    expect((await previewFetch(exposed.url)).status).toBe(404);
  });

  it("runs a command handle through a TCP proxy that cuts its stream again and again: the bytes received are the bytes written", async () => {
    const proxy = await startCuttingProxy(url, { cutAfterBytes: (n) => (n < 6 ? 80_000 + n * 31_337 : undefined) });
    try {
      const sandbox = getHttpSandbox("e2e-cuts", { url: proxy.url, token, retry: { attempts: 2, baseDelayMs: 10 } });
      const handle = await sandbox.run("seq 1 300000; echo tail >&2", { wait: false });
      const chunks: OutputChunk[] = [];
      for await (const chunk of handle) chunks.push(chunk);
      const text = (stream: string) => chunks.filter((chunk) => chunk.stream === stream).map((chunk) => chunk.data).join("");
      expect(text("stdout")).toBe(Array.from({ length: 300_000 }, (_, i) => `${i + 1}\n`).join(""));
      expect(text("stderr")).toBe("tail\n");
      expect(proxy.cuts).toBe(6);
      expect(await handle.result).toMatchObject({ success: true, exitCode: 0 });
    } finally {
      await proxy.close();
    }
  });

  it("survives a proxy that cuts idle connections sooner than the keepalive, one reconnect at a time", async () => {
    const proxy = await startCuttingProxy(url, { idleCutMs: 800 });
    try {
      // One failed reconnect would be too many; every one succeeds, so the budget starts over each time.
      const sandbox = getHttpSandbox("e2e-idle", { url: proxy.url, token, retry: { attempts: 1, baseDelayMs: 10 } });
      expect(await sandbox.run("echo start; sleep 4; echo done")).toMatchObject({ success: true, stdout: "start\ndone\n" });
      // Two cuts in a row already exceed a budget of one that is never reset.
      expect(proxy.cuts).toBeGreaterThanOrEqual(2);
    } finally {
      await proxy.close();
    }
  });

  it("stops wrangler dev, the runtime and every sandbox on one Ctrl-C", async () => {
    // The runtime records each running container server's pid beside its workspace.
    // (read through the service's root: sandboxes' disks are mounted in its own mount namespace)
    const sandboxes = join(`/proc/${stack.pid}/root`, dataDir, "sandboxes");
    const pids = readdirSync(sandboxes)
      .map((name) => join(sandboxes, name, "container.pid"))
      .filter((file) => existsSync(file))
      .map((file) => Number(readFileSync(file, "utf8").split("\n")[0]));
    expect(pids.length).toBeGreaterThanOrEqual(2);
    const exited = new Promise<number | null>((resolve) => stack.once("exit", resolve));
    stack.kill("SIGINT");
    expect(await exited).toBe(0);
    await expect(fetch(url, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
    const wranglerLeft = execFileSync("ps", ["-eo", "args"], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
      .split("\n")
      .filter((line) => line.includes(`--port ${new URL(url).port}`) || line.includes(`127.0.0.1:${new URL(url).port}`));
    expect(wranglerLeft).toEqual([]);
  });
});
