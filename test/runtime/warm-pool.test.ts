/**
 * The warm pool of the runtime (runtime/pool.ts): booted container servers that belong to no sandbox
 * yet. Each is handed to exactly one sandbox, the pool refills, and a server is never handed out
 * twice; a sandbox given a warm server has the walls a cold one has (its workspace, its isolation, a
 * server environment without its settings or secret in it). Real servers throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RuntimeStartRequest } from "../../protocol/runtime.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import { autogroupNice, warmShareAdjustable } from "../../runtime/warm-share.ts";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall, eventually, tempDataDir, type DataDir } from "./helpers.ts";

let dataDir: DataDir;
let warm: ContainerPool;
let cold: ContainerPool;
beforeAll(() => {
  dataDir = tempDataDir();
  const options = { launcher: directLauncher, isolation: { mode: "none" as const, env: {} }, stopGraceMs: 1_000 };
  warm = new ContainerPool({ ...options, dataDir: join(dataDir.path, "warm"), warmServers: 2 });
  cold = new ContainerPool({ ...options, dataDir: join(dataDir.path, "cold") });
});
afterAll(async () => {
  await Promise.all([warm.stopAll(), cold.stopAll()]);
  dataDir.remove();
});

/** A process's share of contended CPU, as its control group gives it (cpu.weight, or v1's cpu.shares); undefined outside one. */
function cpuShareOf(pid: number): number | undefined {
  for (const line of readFileSync(`/proc/${pid}/cgroup`, "utf8").trim().split("\n")) {
    const [, controllers, path] = line.split(":");
    const file = controllers === "" ? join("/sys/fs/cgroup", path!, "cpu.weight") : controllers!.split(",").includes("cpu") ? join("/sys/fs/cgroup/cpu", path!, "cpu.shares") : undefined;
    if (file && path !== "/" && existsSync(file)) return Number(readFileSync(file, "utf8"));
  }
  return undefined;
}

/** The launcher of the warm container waiting in the pool folder `poolDir`. */
const warmServerPid = (poolDir: string) => {
  const folder = readdirSync(poolDir).find((name) => name.startsWith(".warm-"))!;
  return Number(readFileSync(join(poolDir, folder, "container.pid"), "utf8").split("\n")[0]);
};

/**
 * How long a refill may take: a warm server boots at the least CPU share (warm-share.ts), so beside
 * other work on the machine its boot waits for whatever that work leaves.
 */
const REFILL_MS = 120_000;
const fullPool = async () => expect(await eventually(() => warm.warmBootedCount === 2, REFILL_MS)).toBe(true);

describe("the warm pool", { timeout: 4 * REFILL_MS }, () => {
  it("hands each warm server to exactly one sandbox, refills, and never hands one out again", async () => {
    await fullPool();
    const handedOut = new Set<string>();
    for (const key of ["wp-a", "wp-b", "wp-c"]) {
      const waiting = warm.warmRunIds;
      const container = await warm.start(key, {});
      expect(waiting).toContain(container.runId);
      expect(handedOut.has(container.runId)).toBe(false);
      handedOut.add(container.runId);
      expect(warm.warmRunIds).not.toContain(container.runId);
      await fullPool();
      expect(warm.warmRunIds.filter((id) => handedOut.has(id))).toEqual([]);
    }
    // A sandbox started again (after it was destroyed) gets another server, never its old one back.
    const first = warm.info("wp-a").runId!;
    await warm.destroy("wp-a");
    const again = await warm.start("wp-a", {});
    expect(again.runId).not.toBe(first);
    expect(handedOut.has(again.runId)).toBe(false);
    // The server it was given took its folder: no warm folder of it is left.
    await fullPool();
    expect(readdirSync(join(dataDir.path, "warm")).filter((name) => name.startsWith(".warm-"))).toHaveLength(2);
    expect(readFileSync(join(dataDir.path, "warm", "wp-a", "container.pid"), "utf8")).toContain(again.runId);
  }, 6 * REFILL_MS); // it waits for the pool five times

  // Outside containers there is no cgroup to weigh: the server's session (its autogroup) is (warm-share.ts).
  it.runIf(warmShareAdjustable())("keeps a warm server outside containers at its session's least CPU share, an ordinary one once taken", async () => {
    await fullPool();
    const pid = warmServerPid(join(dataDir.path, "warm"));
    expect(autogroupNice(pid)).toBe(19);
    const coldShare = autogroupNice((await cold.start("wp-share-cold", {})).info().pid!);
    let taken: ContainerProcess | undefined;
    for (let i = 0; i < 2 && taken?.info().pid !== pid; i++) taken = await warm.start(`wp-share-${i}`, {});
    expect(taken?.info().pid).toBe(pid);
    expect(autogroupNice(pid)).toBe(coldShare);
    expect(coldShare).toBe(0);
  });

  it("keeps warm servers out of the sandboxes' count and stops them with the pool", async () => {
    const pool = new ContainerPool({ dataDir: join(dataDir.path, "stop"), launcher: directLauncher, isolation: { mode: "none", env: {} }, warmServers: 1 });
    expect(await eventually(() => pool.warmCount === 1, REFILL_MS)).toBe(true);
    expect(pool.size).toBe(0);
    const pidFile = readdirSync(join(dataDir.path, "stop")).find((name) => name.startsWith(".warm-"))!;
    const pid = Number(readFileSync(join(dataDir.path, "stop", pidFile, "container.pid"), "utf8").split("\n")[0]);
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    await pool.stopAll();
    expect(await eventually(() => !existsSync(`/proc/${pid}`))).toBe(true);
    expect(readdirSync(join(dataDir.path, "stop"))).toEqual([]);
  });
});

describe("a sandbox given a warm server", () => {
  /** What a sandbox's server shows of its walls: its workspace, its isolation, what its commands see. */
  const walls = async (container: ContainerProcess, pool: "warm" | "cold") => {
    const info = (await containerCall(container, "GET", "/api/info")).body;
    const run = await containerCall(container, "POST", "/api/execute", { command: 'printf "%s\\n" "$PWD" "$HOME"' });
    const environ = readFileSync(`/proc/${container.info().pid}/environ`, "utf8");
    const root = realpathSync(join(dataDir.path, pool));
    return {
      isolation: info.isolation,
      folders: (run.body.stdout as string).split(root).join("<root>"),
      serverEnvironHasSecret: environ.includes(container.secret),
      serverEnvironHasSandboxEnv: environ.includes("GREETING"),
    };
  };

  const compare = async (key: string, request: RuntimeStartRequest) => {
    await fullPool();
    const waiting = warm.warmRunIds;
    const fromPool = await warm.start(key, request);
    expect(waiting).toContain(fromPool.runId);
    const started = await cold.start(key, request);
    const [w, c] = await Promise.all([walls(fromPool, "warm"), walls(started, "cold")]);
    expect(w).toEqual(c);
    return w;
  };

  it("has the workspace, home and isolation of a cold one, and no settings in its server's environ", async () => {
    const shared = realpathSync(tmpdir());
    const seen = await compare("wp-walls", { env: { GREETING: "hi" }, isolation: { readOnlyPaths: [shared] } });
    expect(seen.folders).toBe("<root>/wp-walls/workspace\n<root>/wp-walls/workspace\n");
    expect(seen.isolation).toMatchObject({ mode: "none", readOnlyPaths: [shared] });
    expect(seen.serverEnvironHasSecret).toBe(false);
    expect(seen.serverEnvironHasSandboxEnv).toBe(false);
  });

});

describe.skipIf(!detectIsolation().bwrap.available)("a sandbox given a warm container", { timeout: 4 * REFILL_MS }, () => {
  const containerPool = (name: string, warmServers = 0) =>
    new ContainerPool({ launcher: directLauncher, isolation: { mode: "bwrap", env: {} }, stopGraceMs: 1_000, dataDir: join(dataDir.path, name), warmServers });
  const inside = async (container: ContainerProcess) => {
    const info = (await containerCall(container, "GET", "/api/info")).body;
    const run = await containerCall(container, "POST", "/api/execute", { command: 'printf "%s\\n" "$PWD" "$HOME" "$(id -un)" "$(hostname)"; cat kept 2>/dev/null' });
    return { isolation: { ...info.isolation, hostUid: undefined }, seen: run.body.stdout as string };
  };

  it("sees what a cold one sees, and takes the sandbox's workspace with it", async () => {
    const warmPool = containerPool("warm-containers", 1);
    const coldPool = containerPool("cold-containers");
    try {
      expect(await eventually(() => warmPool.warmCount === 1, REFILL_MS)).toBe(true);
      const waiting = warmPool.warmRunIds;
      // (Its launcher moves itself into the container's groups as it begins.)
      let waitingShare: number | undefined;
      await eventually(() => (waitingShare = cpuShareOf(warmServerPid(join(dataDir.path, "warm-containers")))) !== undefined, REFILL_MS);
      const fromPool = await warmPool.start("wc", {});
      expect(waiting).toContain(fromPool.runId);
      const started = await coldPool.start("wc", {});
      // Waiting, it had the least share of contended CPU (a refill takes none from sandboxes at work);
      // taken, it has a sandbox's, as a cold one has.
      const coldShare = cpuShareOf(started.info().pid!);
      if (coldShare !== undefined) {
        expect(waitingShare).toBeDefined();
        expect(waitingShare!).toBeLessThan(coldShare);
        expect(cpuShareOf(fromPool.info().pid!)).toBe(coldShare);
      }
      const [w, c] = await Promise.all([inside(fromPool), inside(started)]);
      expect(w).toEqual(c);
      expect(w.seen).toBe("/workspace\n/root\nroot\nsandbox\n");
      expect(w.isolation).toMatchObject({ mode: "bwrap", container: true, pidNamespace: true, allowNetwork: false });
      // The server's environ holds none of what it was handed on stdin.
      expect(readFileSync(`/proc/${fromPool.info().pid}/environ`, "utf8")).not.toContain(fromPool.secret);

      // The workspace outlives its container, also when the next start adopts a warm one; where each
      // sandbox has a disk of its own, the next start is on that disk, cold.
      await containerCall(fromPool, "POST", "/api/execute", { command: "echo from-before > kept" });
      await warmPool.destroy("wc");
      expect(await eventually(() => warmPool.warmCount === 1, REFILL_MS)).toBe(true);
      const next = warmPool.warmRunIds;
      const again = await warmPool.start("wc", {});
      if (warmPool.containerSettings.disks.unavailable === undefined) expect(next).not.toContain(again.runId);
      else expect(next).toContain(again.runId);
      expect((await inside(again)).seen).toBe("/workspace\n/root\nroot\nsandbox\nfrom-before\n");
    } finally {
      await Promise.all([warmPool.stopAll(), coldPool.stopAll()]);
    }
  });
});
