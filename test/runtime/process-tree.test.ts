/**
 * Process trees (runtime/process-tree.ts, runtime/tagged-processes.ts): a container stop takes the
 * server and every process it started, including those in their own process groups and those that
 * left the tree (re-parented), as a real container's teardown would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import { descendantsOf, signalAll } from "../../runtime/process-tree.ts";
import { processesTagged } from "../../runtime/tagged-processes.ts";
import { call, eventually, isRunning, runningPids, runningWithEnv, tempDataDir, type DataDir } from "./helpers.ts";

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
    const url = `http://127.0.0.1:${container.port}`;
    // A background process with children, and one that leaves the tree in a session of its own.
    const started = await call(url, "POST", "/api/process/start", { command: "sleep 300 & sleep 301 & wait" });
    expect(started.status).toBe(200);
    const escaped = await call(url, "POST", "/api/execute", { command: "setsid sleep 302 > /dev/null 2>&1 < /dev/null & echo $!" });
    const escapedPid = Number(escaped.body.stdout.trim());
    expect(escapedPid).toBeGreaterThan(0);

    expect(await eventually(() => descendantsOf(serverPid).length >= 3)).toBe(true);
    const tree = descendantsOf(serverPid);
    const tagged = processesTagged(container.runId);
    expect(tagged).toContain(serverPid);
    expect(tagged).toContain(escapedPid);
    expect(isRunning(escapedPid)).toBe(true);

    await pool.destroy("tree-destroy");
    const everything = [serverPid, escapedPid, ...tree, ...tagged];
    expect(await eventually(() => noneRunning(everything))).toBe(true);
    expect(runningWithEnv(RUN_TAG_VAR, container.runId)).toEqual([]);
  });
});
