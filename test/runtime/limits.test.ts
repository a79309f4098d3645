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
import { limitsFromEnv } from "../../runtime/container/limits.ts";
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
    containers: containerSettings({ dataDir: dir, limits: LIMITS }),
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

    // A memory bomb is killed at the limit, not the host.
    const hog = await exec(attacker, `python3 -c "b = bytearray(${2 * LIMITS.memoryBytes}); print('allocated')"`);
    expect(hog.stdout).not.toContain("allocated");
    expect(hog.exitCode).not.toBe(0);

    // The attacker's sandbox itself still answers, and the victim was never far from idle.
    expect((await exec(attacker, "echo still-here")).stdout).toBe("still-here\n");
    expect(during).toBeLessThanOrEqual(Math.max(2 * idle, idle + 4));
  });
});
