/**
 * Process trees (runtime/process-tree.ts, server-kit/tagged-processes.ts): a container stop takes the
 * server and every process it started, each command in a process group of its own, as a real
 * container's teardown would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import { descendantsOf, signalAll } from "../../runtime/process-tree.ts";
import { processesTagged } from "../../server-kit/tagged-processes.ts";
import { containerCall, eventually, runningPids, runningWithEnv, tempDataDir, type DataDir } from "./helpers.ts";

function noneRunning(pids: number[]): boolean {
  const running = runningPids();
  return pids.every((pid) => !running.has(pid));
}

describe("process tree", () => {
  it("lists every descendant of a process, and signalAll stops them all", async () => {
    const root = spawn("sh", ["-c", "sleep 300 & (sleep 301 & wait) & wait"], { detached: true, stdio: "ignore" });
    const rootPid = root.pid!;
    const exited = new Promise((resolve) => root.once("exit", resolve));
    try {
      // sh → sleep 300, sh → subshell → sleep 301.
      expect(await eventually(() => descendantsOf(rootPid).length >= 3)).toBe(true);
      const tree = descendantsOf(rootPid);
      expect(tree).not.toContain(rootPid);
      signalAll([rootPid, ...tree], "SIGKILL");
      await exited;
      expect(await eventually(() => noneRunning(tree))).toBe(true);
    } finally {
      signalAll([rootPid], "SIGKILL");
    }
  });
});

describe("destroying a sandbox", () => {
  let dataDir: DataDir;
  let pool: ContainerPool;
  beforeAll(() => {
    dataDir = tempDataDir();
    pool = new ContainerPool({ dataDir: dataDir.path, launcher: directLauncher, isolation: { mode: "none" } });
  });
  afterAll(async () => {
    await pool.stopAll();
    dataDir.remove();
  });

  it("stops its server and every process the server started", async () => {
    const container = await pool.start("tree-destroy", {});
    const serverPid = container.info().pid!;
    expect(processesTagged(container.runId)).toEqual([serverPid]);
    // Two background processes with children of their own, each in its own process group.
    for (const command of ["sleep 300 & sleep 301 & wait", "(sleep 302; true) & wait"]) {
      expect((await containerCall(container, "POST", "/api/process/start", { command })).status).toBe(200);
    }
    // bash → 2 sleeps; bash → subshell → sleep.
    expect(await eventually(() => descendantsOf(serverPid).length >= 6)).toBe(true);
    const tree = descendantsOf(serverPid);
    expect(noneRunning(tree)).toBe(false);

    const ended = await pool.destroy("tree-destroy");
    expect(ended).toMatchObject({ running: false, signal: "SIGKILL" });
    expect(await eventually(() => noneRunning([serverPid, ...tree]))).toBe(true);
    expect(runningWithEnv(RUN_TAG_VAR, container.runId)).toEqual([]);
  });
});
