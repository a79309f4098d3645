/**
 * One sandbox cannot take the machine: a fork bomb stops at its process limit, a memory bomb is killed
 * at its memory limit, and meanwhile another sandbox's commands answer about as fast as when all was
 * quiet. Both sandboxes are containers of a runtime with small limits, attacked as a hostile command would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { ContainerPool } from "../../runtime/pool.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { containerSettings } from "../../runtime/container/settings.ts";
import { fitFileTable, limitsFromEnv } from "../../runtime/container/limits.ts";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall, tempDataDir, type DataDir } from "./helpers.ts";

const LIMITS = { pids: 128, memoryBytes: 256 * 1024 ** 2, cpuWeight: 100, openFiles: 512 };

let dataDir: DataDir;
let pool: ContainerPool;
beforeAll(() => {
  dataDir = tempDataDir();
  const dir = join(dataDir.path, "limits");
  pool = new ContainerPool({
    dataDir: dir,
    launcher: directLauncher,
    isolation: { mode: "bwrap", env: {} },
    stopGraceMs: 1_000,
    containers: containerSettings({ dataDir: dir, limits: { ...LIMITS, diskBytes: 1024 ** 3 } }),
  });
});
afterAll(async () => {
  await pool.stopAll();
  dataDir.remove();
});

/** A command's result; one that ran out of its time answers EXECUTION_TIMEOUT with its result as context. */
const exec = async (container: ContainerProcess, command: string, timeout = 20_000) => {
  const { body } = await containerCall(container, "POST", "/api/execute", { command, timeout });
  return (body.code === "EXECUTION_TIMEOUT" ? body.context : body) as { exitCode: number; stdout: string; stderr: string; timedOut?: boolean };
};

const enforcedOnGroups = (info: { body: { isolation: { limits: { enforcedBy: string } } } }) => info.body.isolation.limits.enforcedBy.startsWith("cgroup");

async function medianExecMs(container: ContainerProcess, runs = 15): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    expect((await exec(container, "echo hi")).stdout).toBe("hi\n");
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

describe("operator settings", () => {
  it("read from the environment, with clear refusals", () => {
    expect(limitsFromEnv({ SANDBOX_PIDS_MAX: "256", SANDBOX_MEMORY_MAX: "512M" })).toMatchObject({ pids: 256, memoryBytes: 512 * 1024 ** 2 });
    expect(() => limitsFromEnv({ SANDBOX_MEMORY_MAX: "lots" })).toThrow(/SANDBOX_MEMORY_MAX/);
    expect(() => limitsFromEnv({ SANDBOX_PIDS_MAX: "2" })).toThrow(/SANDBOX_PIDS_MAX/);
  });

  it("keep one sandbox's open files (processes × files each) within half of the host's file table", () => {
    const limits = limitsFromEnv({});
    // A file table of 2,466,174 (what 24 GiB gives without systemd): 1,024 processes × 1,204 files at most.
    expect(fitFileTable(limits, 2_466_174)).toMatchObject({ pids: 1024, openFiles: 1204 });
    expect(fitFileTable(limits, 2_466_174).openFiles * limits.pids).toBeLessThanOrEqual(2_466_174 / 2);
    // A table with room (or none to speak of) leaves the operator's number as it is.
    expect(fitFileTable(limits, 100_000_000)).toEqual(limits);
    expect(fitFileTable(limits, undefined)).toEqual(limits);
    // Never so low that a shell cannot start.
    expect(fitFileTable({ ...limits, pids: 4_000_000 }, 2_466_174).openFiles).toBe(64);
  });
});

describe.skipIf(!detectIsolation().bwrap.available)("a sandbox's limits", () => {
  it("are reported with their current use and what enforces them", async () => {
    const container = await pool.start("limits-info", {});
    const info = (await containerCall(container, "GET", "/api/info")).body;
    expect(info.isolation.limits).toMatchObject({ ...LIMITS, enforcedBy: expect.any(String) });
    if (info.isolation.limits.enforcedBy.startsWith("cgroup")) {
      expect(info.resources.processes).toMatchObject({ max: LIMITS.pids, current: expect.any(Number) });
      expect(info.resources.memory).toMatchObject({ totalBytes: LIMITS.memoryBytes, source: "cgroup" });
    }
    expect((await exec(container, "ulimit -n")).stdout).toBe(`${LIMITS.openFiles}\n`);
  });

  it("hold against a fork bomb and a memory bomb while another sandbox keeps answering", async () => {
    const [victim, attacker] = await Promise.all([pool.start("limits-victim", {}), pool.start("limits-attacker", {})]);
    await medianExecMs(victim, 5); // warm
    const idle = await medianExecMs(victim);

    // A bounded fork bomb: it runs until its command's timeout ends it, trying to fork all along.
    const bomb = exec(attacker, "bomb() { bomb | bomb & }; bomb; sleep 8", 6_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const during = await medianExecMs(victim);
    const bombed = await bomb;
    expect(bombed).toMatchObject({ exitCode: 124, timedOut: true });
    expect(bombed.stderr).toMatch(/fork|Resource temporarily unavailable/);
    // Its pids group stopped it, where it has one (not its host uid's count of processes).
    const enforcedBy = (await containerCall(attacker, "GET", "/api/info")).body.isolation.limits.enforcedBy as string;
    if (enforcedBy.startsWith("cgroup")) {
      const events = await exec(attacker, "cat /sys/fs/cgroup/pids/pids.events 2>/dev/null || cat /sys/fs/cgroup/pids.events");
      expect(Number(/max (\d+)/.exec(events.stdout)?.[1])).toBeGreaterThan(0);
    }

    // A memory bomb is killed at the limit, not the host.
    const hog = await exec(attacker, `python3 -c "b = bytearray(${2 * LIMITS.memoryBytes}); print('allocated')"`);
    expect(hog.stdout).not.toContain("allocated");
    expect(hog.exitCode).not.toBe(0);

    // The attacker's sandbox itself still answers, and the victim was never far from idle.
    expect((await exec(attacker, "echo still-here")).stdout).toBe("still-here\n");
    expect(during).toBeLessThanOrEqual(Math.max(2 * idle, idle + 4));
  });

  it("hold against a flood of open files: bounded for the whole sandbox, and charged to its memory", async () => {
    const attacker = await pool.start("limits-files", {});
    // As many processes as it may make, each opening files until it may open no more, all held at once.
    const flood = await exec(attacker, `python3 - <<'EOF'
import os, time
def kernel_memory():
    try:
        return int(open("/sys/fs/cgroup/memory/memory.kmem.usage_in_bytes").read())
    except OSError:
        pass
    try:
        stat = dict(line.split() for line in open("/sys/fs/cgroup/memory.stat"))
        return int(stat.get("kernel", stat.get("slab", -1)))
    except OSError:
        return -1
go_r, go_w = os.pipe()
done_r, done_w = os.pipe()
kids = []
for _ in range(${LIMITS.pids}):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.read(go_r, 1)
        opened = 0
        try:
            while True:
                os.open("/dev/null", os.O_RDONLY)
                opened += 1
        except OSError:
            pass
        os.write(done_w, b"%d\\n" % opened)
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
time.sleep(0.5)
before = kernel_memory()
os.write(go_w, b"x" * len(kids))
counts = []
buffer = b""
while len(counts) < len(kids):
    buffer += os.read(done_r, 65536)
    *lines, buffer = buffer.split(b"\\n")
    counts += [int(line) for line in lines]
print(len(kids), sum(counts), before, kernel_memory())
for pid in kids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
EOF`, 60_000);
    const [kids = 0, opened = 0, before = -1, during = -1] = flood.stdout.trim().split(/\s+/).map(Number);
    console.log(`open-files flood: ${kids} processes held ${opened} files; the sandbox's kernel memory went from ${before} to ${during} bytes`);
    expect(kids).toBeGreaterThan(LIMITS.pids / 2);
    // Never more than processes × files each, for the whole sandbox.
    expect(opened).toBeGreaterThan(kids * (LIMITS.openFiles / 2));
    expect(opened).toBeLessThanOrEqual(LIMITS.pids * LIMITS.openFiles);
    // What they cost the kernel was counted against the sandbox's memory (at least a small struct each).
    if (before >= 0 && enforcedOnGroups(await containerCall(attacker, "GET", "/api/info"))) expect(during - before).toBeGreaterThan(opened * 64);
    expect((await exec(attacker, "echo after-flood")).stdout).toBe("after-flood\n");
  });
});
