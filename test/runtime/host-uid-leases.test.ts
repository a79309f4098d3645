/**
 * Two runtimes on one machine (two stacks, each with its own data folder) never lend the same host
 * uid, so nothing of one sandbox counts against another's: a fork bomb in one runtime's sandbox hits
 * its own pids group while the other runtime starts sandboxes and runs commands as usual. A runtime's
 * block of uids is its own while it lives, and free again the moment it dies, however it dies.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerPool } from "../../runtime/pool.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { containerSettings } from "../../runtime/container/settings.ts";
import { BLOCK_SIZE, leaseUidBlock } from "../../runtime/container/uid-lease.ts";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { call, containerCall, eventually, tempDataDir, type DataDir } from "./helpers.ts";

const asRoot = process.getuid?.() === 0;
const bwrap = detectIsolation().bwrap.available;
/** Far above where runtimes lease by default, so no other runtime of the machine takes these blocks meanwhile. */
const HIGH_BASE = 4_000_000_000;

const LIMITS = { pids: 128, memoryBytes: 512 * 1024 ** 2, cpuWeight: 100, openFiles: 512 };

let dataDir: DataDir;
let first: ContainerPool;
let second: OtherRuntime | undefined;
beforeAll(() => {
  dataDir = tempDataDir();
  const dir = join(dataDir.path, "first-stack");
  first = new ContainerPool({ dataDir: dir, launcher: directLauncher, isolation: { mode: "bwrap", env: {} }, stopGraceMs: 1_000, containers: containerSettings({ dataDir: dir, limits: { ...LIMITS, diskBytes: 1024 ** 3 } }) });
});
afterAll(async () => {
  if (second && second.child.exitCode === null) {
    const exited = new Promise((resolve) => second!.child.once("exit", resolve));
    second.child.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    second.child.kill("SIGKILL");
  }
  await first.stopAll();
  dataDir.remove();
});

/** Another stack's runtime: a process of its own, with a data folder of its own. */
interface OtherRuntime {
  child: ChildProcess;
  url: string;
  secret: string;
}

async function startOtherRuntime(dir: string): Promise<OtherRuntime> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("../../runtime/main.ts", import.meta.url))], {
    env: { ...process.env, RUNTIME_PORT: "0", SANDBOX_DATA_DIR: dir, SANDBOX_ISOLATION: "bwrap", SANDBOX_WARM_POOL: "0", SANDBOX_PIDS_MAX: String(LIMITS.pids) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  expect(await eventually(() => output.includes("its secret is in"), 20_000)).toBe(true);
  return { child, url: /listening on (http:\/\/\S+)/.exec(output)![1]!, secret: readFileSync(join(dir, "runtime.secret"), "utf8").trim() };
}

/** A sandbox of the other runtime: a command runner on its container's server. */
async function otherSandbox(runtime: OtherRuntime, key: string) {
  const started = await call(runtime.url, "POST", `/containers/${key}/start`, {}, runtime.secret);
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const server = `http://127.0.0.1:${started.body.ports["3000"]}`;
  return async (command: string) => (await call(server, "POST", "/api/execute", { command, timeout: 20_000 }, started.body.secret)).body as { exitCode: number; stdout: string };
}

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
  it("lend disjoint host uids, and a fork bomb in one leaves the other's starts and commands working", async () => {
    second = await startOtherRuntime(join(dataDir.path, "second-stack"));
    const mine = await first.start("lease-a", {});
    const theirs = await otherSandbox(second, "lease-b");
    const [ua, ub] = [await hostUid(mine), Number((await theirs("awk '{print $2}' /proc/self/uid_map")).stdout.trim())];
    expect(ua).not.toBe(ub);
    const block = (await first.containerSettings.users.firstUid())!;
    expect(ua - block).toBeLessThan(BLOCK_SIZE);
    expect(ub < block || ub >= block + BLOCK_SIZE).toBe(true);

    // A fork bomb in the first runtime's sandbox...
    const attacker = await first.start("lease-forker", {});
    const bomb = exec(attacker, "bomb() { bomb | bomb & }; bomb; sleep 8", 6_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // ...while the other runtime starts sandboxes and runs commands in them, each with many processes.
    const started = await Promise.all(["lease-busy-1", "lease-busy-2", "lease-busy-3"].map((key) => otherSandbox(second!, key)));
    const results = await Promise.all(started.map((run) => run(`for i in $(seq ${LIMITS.pids / 2}); do sleep 2 & done; wait; echo done`)));
    for (const result of results) expect(result).toMatchObject({ exitCode: 0, stdout: "done\n" });
    const bombed = await bomb;
    expect(bombed.stderr).toMatch(/fork|Resource temporarily unavailable/);
    // What stopped the bomb was its own pids group, where there is one (not its host uid's process count).
    const events = await exec(attacker, "cat /sys/fs/cgroup/pids/pids.events 2>/dev/null || cat /sys/fs/cgroup/pids.events 2>/dev/null");
    const enforcedBy = (await containerCall(attacker, "GET", "/api/info")).body.isolation.limits.enforcedBy as string;
    if (enforcedBy.startsWith("cgroup")) expect(Number(/max (\d+)/.exec(events.stdout)?.[1])).toBeGreaterThan(0);
    expect((await exec(attacker, "echo still-here")).stdout).toBe("still-here\n");
    expect((await theirs("echo still-here")).stdout).toBe("still-here\n");
  });
});
