/**
 * Two runtimes on one machine (two stacks, each with its own data folder) never lend the same host
 * uid, so nothing of one sandbox counts against another's: a fork bomb in one runtime's sandbox hits
 * its own pids group while the other runtime starts sandboxes and runs commands as usual. A runtime's
 * block of uids is its own while it lives, and free again the moment it dies, however it dies.
 */
import { spawn } from "node:child_process";
import { chownSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerPool } from "../../runtime/pool.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { containerSettings } from "../../runtime/container/settings.ts";
import { BLOCK_SIZE, leaseUidBlock } from "../../runtime/container/uid-lease.ts";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall, tempDataDir, type DataDir } from "./helpers.ts";

const asRoot = process.getuid?.() === 0;
const bwrap = detectIsolation().bwrap.available;
/** Far above where runtimes lease by default, so no other runtime of the machine takes these blocks meanwhile. */
const HIGH_BASE = 4_000_000_000;

const LIMITS = { pids: 128, memoryBytes: 512 * 1024 ** 2, cpuWeight: 100, openFiles: 512 };

let dataDir: DataDir;
let first: ContainerPool;
let second: ContainerPool;
beforeAll(() => {
  dataDir = tempDataDir();
  const pool = (name: string) => {
    const dir = join(dataDir.path, name);
    return new ContainerPool({ dataDir: dir, launcher: directLauncher, isolation: { mode: "bwrap", env: {} }, stopGraceMs: 1_000, containers: containerSettings({ dataDir: dir, limits: LIMITS }) });
  };
  first = pool("first-stack");
  second = pool("second-stack");
});
afterAll(async () => {
  await Promise.all([first.stopAll(), second.stopAll()]);
  dataDir.remove();
});

const exec = async (container: ContainerProcess, command: string, timeout = 20_000) => {
  const { body } = await containerCall(container, "POST", "/api/execute", { command, timeout });
  return (body.code === "EXECUTION_TIMEOUT" ? body.context : body) as { exitCode: number; stdout: string; stderr: string };
};

const hostUid = async (container: ContainerProcess) => Number((await exec(container, "awk '{print $2}' /proc/self/uid_map")).stdout.trim());

describe.skipIf(!asRoot)("a runtime's block of host uids", () => {
  it("is its own while it lives and free again once it is killed", async () => {
    const held = leaseUidBlock(HIGH_BASE);
    // Another runtime (a process of its own) leases the next free block...
    const other = spawn(process.execPath, [
      "--input-type=module",
      "-e",
      `import { leaseUidBlock } from ${JSON.stringify(new URL("../../runtime/container/uid-lease.ts", import.meta.url).pathname)};
       console.log(leaseUidBlock(${HIGH_BASE}).first); setInterval(() => {}, 60_000);`,
    ]);
    try {
      const theirs = Number(await new Promise<string>((resolve, reject) => {
        other.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString()));
        other.once("exit", (code) => reject(new Error(`the other runtime exited (${code})`)));
      }));
      expect(theirs).toBe(held.first + BLOCK_SIZE);
      // ...which nobody else gets while it lives.
      const third = leaseUidBlock(HIGH_BASE);
      expect(third.first).toBe(held.first + 2 * BLOCK_SIZE);
      third.close();
      // Killed, as a crash would end it: its block is free at once, with nothing cleaned up by hand.
      other.kill("SIGKILL");
      await new Promise((resolve) => other.once("exit", resolve));
      const after = leaseUidBlock(HIGH_BASE);
      expect(after.first).toBe(theirs);
      after.close();
    } finally {
      other.kill("SIGKILL");
      held.close();
    }
  });

  it("is kept only in a folder no one but root may change", () => {
    const foreign = join(dataDir.path, "not-roots");
    mkdirSync(foreign);
    chownSync(foreign, 65534, 65534);
    expect(() => leaseUidBlock(HIGH_BASE, join(foreign, "leases"))).toThrow(/only root may write/);
  });
});

describe.skipIf(!bwrap || !asRoot)("two runtimes on one machine", () => {
  it("lend disjoint host uids", async () => {
    const [a, b] = await Promise.all([first.start("lease-a", {}), second.start("lease-b", {})]);
    const [ua, ub] = await Promise.all([hostUid(a), hostUid(b)]);
    expect(ua).not.toBe(ub);
    const [blockA, blockB] = await Promise.all([first.containerSettings.users.firstUid(), second.containerSettings.users.firstUid()]);
    expect(blockA).not.toBe(blockB);
    expect(ua - blockA!).toBeLessThan(BLOCK_SIZE);
    expect(ub - blockB!).toBeLessThan(BLOCK_SIZE);
    expect(Math.abs(blockA! - blockB!)).toBeGreaterThanOrEqual(BLOCK_SIZE);
  });

  it("do not share a process budget: a fork bomb in one leaves the other's starts and commands working", async () => {
    const attacker = await first.start("lease-forker", {});
    const bomb = exec(attacker, "bomb() { bomb | bomb & }; bomb; sleep 8", 6_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Meanwhile the other stack starts sandboxes and runs commands in them, each with many processes.
    const started = await Promise.all(["lease-busy-1", "lease-busy-2", "lease-busy-3"].map((key) => second.start(key, {})));
    const results = await Promise.all(started.map((container) => exec(container, `for i in $(seq ${LIMITS.pids / 2}); do sleep 2 & done; wait; echo done`)));
    for (const result of results) expect(result).toMatchObject({ exitCode: 0, stdout: "done\n" });
    const bombed = await bomb;
    expect(bombed.stderr).toMatch(/fork|Resource temporarily unavailable/);
    // What stopped the bomb was its own pids group, where there is one (not its host uid's process count).
    const events = await exec(attacker, "cat /sys/fs/cgroup/pids/pids.events 2>/dev/null || cat /sys/fs/cgroup/pids.events 2>/dev/null");
    const enforcedBy = (await containerCall(attacker, "GET", "/api/info")).body.isolation.limits.enforcedBy as string;
    if (enforcedBy.startsWith("cgroup")) expect(Number(/max (\d+)/.exec(events.stdout)?.[1])).toBeGreaterThan(0);
    expect((await exec(attacker, "echo still-here")).stdout).toBe("still-here\n");
  });
});
