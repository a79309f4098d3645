/**
 * The container server's isolation settings and what bwrap gives each command: settings read from
 * the environment, no silent downgrade when bubblewrap is missing, state directories cleaned up,
 * and under bwrap a read-only system, a private /tmp, allowed paths, sandboxes that cannot see each
 * other's files or processes, and kills and timeouts that still reach every process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { resolveIsolationOptions } from "../../server-kit/isolation-config.ts";
import { startServer } from "../../container/server.ts";
import { call, eventually } from "./helpers.ts";
import { bwrapUnavailableReason, startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

const unavailable = bwrapUnavailableReason();
// In CI on Linux the isolation tests must run: a missing bwrap there fails the run instead of skipping.
if (unavailable && process.env.CI && process.platform === "linux") throw new Error(`bwrap is required in CI: ${unavailable}`);
if (unavailable) console.warn(`[isolation tests] bwrap tests skipped: ${unavailable}`);

/** Host pids whose environment holds `name=value` (every process of a command inherits the call's env). */
function processesWith(name: string, value: string): number[] {
  const needle = `${name}=${value}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "utf8").includes(needle)) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

describe("isolation config and detection", () => {
  it("detects bubblewrap", () => {
    const support = detectIsolation();
    expect(support.none.available).toBe(true);
    if (unavailable) expect(support.bwrap).toMatchObject({ available: false, reason: expect.any(String) });
    else expect(support.bwrap).toMatchObject({ available: true, version: expect.stringMatching(/^\d+\.\d+/) });
  });

  it("reads its settings from the environment (JSON or colon lists)", () => {
    const options = resolveIsolationOptions({}, {
      SANDBOX_ISOLATION: "bwrap",
      SANDBOX_ALLOW_NETWORK: "1",
      SANDBOX_READ_ONLY_PATHS: "/usr/share:/opt",
      SANDBOX_READ_WRITE_PATHS: '["/srv/data"]',
      SANDBOX_BWRAP_ARGS: '["--setenv","X","1"]',
    });
    expect(options).toEqual({
      isolation: "bwrap",
      allowNetwork: true,
      readOnlyPaths: ["/usr/share", "/opt"],
      readWritePaths: ["/srv/data"],
      allowSystemBinaries: true,
      bwrapArgs: ["--setenv", "X", "1"],
    });
    expect(resolveIsolationOptions({}, { SANDBOX_ENABLE_INTERNET: "0" }).allowNetwork).toBe(false);
    expect(resolveIsolationOptions({ allowNetwork: true }, { SANDBOX_ALLOW_NETWORK: "0" }).allowNetwork).toBe(true);
    expect(() => resolveIsolationOptions({}, { SANDBOX_ISOLATION: "docker" })).toThrow(/unknown isolation/);
    expect(() => resolveIsolationOptions({}, { SANDBOX_READ_WRITE_PATHS: "relative/path" })).toThrow(/absolute/);
  });

  it("refuses to start when bwrap is asked for but missing: no silent downgrade", async () => {
    const saved = process.env.SANDBOX_BWRAP_PATH;
    process.env.SANDBOX_BWRAP_PATH = "/nonexistent/bwrap";
    const workspace = mkdtempSync(join(tmpdir(), "sandbox-iso-"));
    try {
      expect(detectIsolation({ refresh: true }).bwrap.available).toBe(false);
      await expect(startServer({ port: 0, workspace, isolation: "bwrap" })).rejects.toMatchObject({ code: "ISOLATION_UNAVAILABLE" });
    } finally {
      if (saved === undefined) delete process.env.SANDBOX_BWRAP_PATH;
      else process.env.SANDBOX_BWRAP_PATH = saved;
      detectIsolation({ refresh: true });
      rmSync(workspace, { recursive: true, force: true });
    }
  });

  it("the server program exits with ISOLATION_UNAVAILABLE instead of running unconfined", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "sandbox-iso-"));
    try {
      const entry = fileURLToPath(new URL("../../container/main.ts", import.meta.url));
      const child = spawn(process.execPath, [entry], {
        env: { ...process.env, PORT: "0", WORKSPACE: workspace, SANDBOX_ISOLATION: "bwrap", SANDBOX_BWRAP_PATH: "/nonexistent/bwrap" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (d) => (output += d));
      child.stderr.on("data", (d) => (output += d));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code).not.toBe(0);
      expect(output).toContain("ISOLATION_UNAVAILABLE");
      expect(output).not.toContain("listening");
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });

  it("removes its state directory on close, and those of servers that died without closing", async () => {
    const dead = spawn("true");
    await new Promise((resolve) => dead.once("exit", resolve));
    const stale = join(tmpdir(), `sandbox-state-${dead.pid}-abc123`);
    const live = join(tmpdir(), `sandbox-state-${process.pid}-xyz789`);
    mkdirSync(join(stale, "runs"), { recursive: true });
    mkdirSync(live);
    try {
      const t = await startSandbox();
      const own = readdirSync(tmpdir()).filter((name) => name.startsWith(`sandbox-state-${process.pid}-`) && name !== "sandbox-state-" + process.pid + "-xyz789");
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(own.length).toBeGreaterThanOrEqual(1);
      await t.close();
      const after = readdirSync(tmpdir()).filter((name) => own.includes(name));
      expect(after.length).toBe(own.length - 1);
    } finally {
      rmSync(stale, { recursive: true, force: true });
      rmSync(live, { recursive: true, force: true });
    }
  });

  it("reports no isolation in /api/info when none is configured", async () => {
    const t = await startSandbox();
    try {
      const { body } = await t.get("/api/info");
      expect(body.isolation).toMatchObject({ mode: "none", pidNamespace: false, allowNetwork: true });
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(unavailable !== undefined)("under bwrap", () => {
  let a: SandboxServer;
  let b: SandboxServer;
  let outside: string;
  let readOnly: string;
  let readWrite: string;

  beforeAll(async () => {
    outside = mkdtempSync(join(tmpdir(), "sandbox-host-"));
    readOnly = mkdtempSync(join(tmpdir(), "sandbox-ro-"));
    readWrite = mkdtempSync(join(tmpdir(), "sandbox-rw-"));
    writeFileSync(join(readOnly, "data.txt"), "shared data");
    a = await startSandbox({ isolation: "bwrap", readOnlyPaths: [readOnly], readWritePaths: [readWrite] });
    b = await startSandbox({ isolation: "bwrap" });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const dir of [outside, readOnly, readWrite]) rmSync(dir, { recursive: true, force: true });
  });

  it("writes land in the workspace; everywhere else is read-only or absent", async () => {
    const ok = await a.exec({ command: "echo inside > made-inside.txt && cat made-inside.txt" });
    expect(ok.body).toMatchObject({ exitCode: 0, stdout: "inside\n" });
    expect(readFileSync(join(a.workspace, "made-inside.txt"), "utf8")).toBe("inside\n");

    for (const target of ["/etc/sandbox-escape", "/usr/sandbox-escape", join(outside, "escape.txt"), "/sandbox-escape"]) {
      const { body } = await a.exec({ command: `echo pwned > ${target}` });
      expect(body.exitCode, target).not.toBe(0);
    }
    expect(existsSync("/etc/sandbox-escape")).toBe(false);
    expect(existsSync(join(outside, "escape.txt"))).toBe(false);
    // Not even root can remount its way out: capabilities are dropped.
    expect((await a.exec({ command: "mount -o remount,rw /usr" })).body.exitCode).not.toBe(0);
  });

  it("keeps the file API to what its commands see at the same path: the workspace and the configured paths", async () => {
    writeFileSync(join(outside, "host.txt"), "host only");
    const outsideWorkspace = { status: 403, body: { code: "PATH_OUTSIDE_WORKSPACE" } };
    for (const path of [join(outside, "host.txt"), "/etc/hostname", "../x", "/tmp/x"]) {
      expect(await a.post("/api/files/read", { path }), path).toMatchObject(outsideWorkspace);
      expect(await a.post("/api/files/write", { path, content: "x" }), path).toMatchObject(outsideWorkspace);
    }
    expect(readFileSync(join(outside, "host.txt"), "utf8")).toBe("host only");
    expect((await a.post("/api/files/read", { path: join(readOnly, "data.txt") })).body.content).toBe("shared data");
    expect(await a.post("/api/files/write", { path: join(readOnly, "data.txt"), content: "x" })).toMatchObject(outsideWorkspace);
    expect((await a.post("/api/files/write", { path: "/workspace/by-name.txt", content: "x" })).status).toBe(200);
    expect(readFileSync(join(a.workspace, "by-name.txt"), "utf8")).toBe("x");
  });

  it("has a private /tmp that persists between commands but never reaches the host's /tmp", async () => {
    const marker = `sandbox-private-${process.pid}`;
    expect((await a.exec({ command: `echo kept > /tmp/${marker}` })).body.exitCode).toBe(0);
    expect((await a.exec({ command: `cat /tmp/${marker}` })).body.stdout).toBe("kept\n");
    expect(existsSync(join("/tmp", marker))).toBe(false);
    expect((await b.exec({ command: `cat /tmp/${marker}` })).body.exitCode).not.toBe(0);
  });

  it("honours read-only and read-write paths", async () => {
    expect((await a.exec({ command: `cat ${join(readOnly, "data.txt")}` })).body.stdout).toBe("shared data");
    expect((await a.exec({ command: `echo x > ${join(readOnly, "data.txt")}` })).body.exitCode).not.toBe(0);
    expect(readFileSync(join(readOnly, "data.txt"), "utf8")).toBe("shared data");
    expect((await a.exec({ command: `echo written > ${join(readWrite, "out.txt")}` })).body.exitCode).toBe(0);
    expect(readFileSync(join(readWrite, "out.txt"), "utf8")).toBe("written\n");
  });

  it("does not show one sandbox's files to another", async () => {
    writeFileSync(join(a.workspace, "a-secret.txt"), "only for a");
    const peek = await b.exec({ command: `cat ${join(a.workspace, "a-secret.txt")}; ls ${a.workspace}` });
    expect(peek.body.exitCode).not.toBe(0);
    expect(peek.body.stdout).not.toContain("only for a");
    expect((await b.exec({ command: `test -e ${join(a.workspace, "a-secret.txt")}` })).body.exitCode).toBe(1);
    expect((await a.exec({ command: "cat a-secret.txt" })).body.stdout).toBe("only for a");
  });

  it("shows a command only its own processes", async () => {
    const marker = `host-only-${process.pid}`;
    const hostProcess = spawn("sleep", ["30"], { argv0: marker, stdio: "ignore" });
    try {
      const { body } = await a.exec({ command: "for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | tr '\\0' ' '; echo; done; echo pids: /proc/[0-9]*" });
      expect(body.exitCode).toBe(0);
      expect(body.stdout).not.toContain(marker);
      expect(body.stdout).not.toContain("node");
      const pids = body.stdout.trim().split("\n").at(-1)!.replace("pids: ", "").split(" ").map((p: string) => Number(p.replace("/proc/", "")));
      // bwrap's init, the shell and its subshells: a handful of small pids, none of the host's.
      expect(Math.max(...pids)).toBeLessThan(20);
      expect(pids).not.toContain(hostProcess.pid);
      // The server's own environment (and anything else about it) is out of reach.
      expect((await a.exec({ command: `cat /proc/${process.pid}/environ` })).body.exitCode).not.toBe(0);
    } finally {
      hostProcess.kill("SIGKILL");
    }
  });

  it("a kill reaches every process under bwrap, even ones that left the process group", async () => {
    const marker = `kill-${process.pid}-${Date.now()}`;
    const started = await call(a.url, "POST", "/api/process/start", {
      command: "sleep 301 & setsid sleep 302 & (sleep 303 &) ; sleep 304",
      env: { TREE_MARK: marker },
    });
    expect(started.status).toBe(200);
    // bwrap, its init, and four sleeps (the shell execs the last one itself).
    expect(await eventually(() => processesWith("TREE_MARK", marker).length >= 6)).toBe(true);
    const killed = await call(a.url, "DELETE", `/api/process/${started.body.process.id}`);
    expect(killed.status).toBe(200);
    expect(await eventually(() => processesWith("TREE_MARK", marker).length === 0)).toBe(true);
    expect((await a.get(`/api/process/${started.body.process.id}`)).body.process.status).toBe("killed");
  });

  it("a timeout reaches every process under bwrap too", async () => {
    const marker = `timeout-${process.pid}-${Date.now()}`;
    const { body } = await a.exec({ command: "sleep 311 & setsid sleep 312 & sleep 313", timeout: 500, env: { TREE_MARK: marker } });
    expect(body).toMatchObject({ code: "EXECUTION_TIMEOUT", context: { timedOut: true, exitCode: 124 } });
    expect(await eventually(() => processesWith("TREE_MARK", marker).length === 0)).toBe(true);
  });

  it("keeps session state under bwrap, including a cwd in the private /tmp", async () => {
    const first = await a.exec({ command: "mkdir -p /tmp/work && cd /tmp/work && export UNDER_BWRAP=1", sessionId: "iso" });
    expect(first.body.exitCode).toBe(0);
    const second = await a.exec({ command: "pwd; echo $UNDER_BWRAP", sessionId: "iso" });
    expect(second.body.stdout).toBe("/tmp/work\n1\n");
  });

  it("describes itself in /api/info and /api/instructions", async () => {
    const info = await a.get("/api/info");
    expect(info.body).toMatchObject({
      status: "ok",
      workspace: a.workspace,
      isolation: { mode: "bwrap", allowNetwork: false, pidNamespace: true, readOnlyPaths: [readOnly], readWritePaths: [readWrite] },
    });
    expect(info.body.resources.memory.totalBytes).toBeGreaterThan(info.body.resources.memory.usedBytes);
    expect(info.body.resources.cpus).toBeGreaterThanOrEqual(1);
    expect(info.body.resources.disk).toMatchObject({ path: a.workspace });
    expect(info.body.resources.disk.totalBytes).toBeGreaterThan(0);
    expect(info.body.uptimeMs).toBeGreaterThanOrEqual(0);

    const { body } = await a.get("/api/instructions");
    expect(body.instructions).toContain(a.workspace);
    expect(body.instructions).toContain("bubblewrap");
    expect(body.instructions).toContain("no network");
    expect(body.instructions).toContain("bash");
  });
});
