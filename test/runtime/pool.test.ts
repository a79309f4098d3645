/**
 * The runtime's pool of container servers (runtime/pool.ts), with real servers: one container per
 * key, concurrent starts joining, a stopping container gone before the next starts, and each run
 * remembered after it ended.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { CONTAINER_SERVER_PORT } from "../../protocol/runtime.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import { containerCall, isRunning, tempDataDir, type DataDir } from "./helpers.ts";

let dataDir: DataDir;
let pool: ContainerPool;
beforeAll(() => {
  dataDir = tempDataDir();
  pool = new ContainerPool({ dataDir: dataDir.path, launcher: directLauncher, isolation: { mode: "none" }, stopGraceMs: 2_000 });
});
afterAll(async () => {
  await pool.stopAll();
  dataDir.remove();
});

describe("container pool", () => {
  it("starts one container per key: concurrent starts join, and a running one is returned as is", async () => {
    const [first, second] = await Promise.all([pool.start("pool-one", {}), pool.start("pool-one", {})]);
    expect(second).toBe(first);
    expect(await pool.start("pool-one", {})).toBe(first);
    expect(pool.size).toBe(1);
    expect(pool.info("pool-one")).toMatchObject({
      key: "pool-one",
      running: true,
      runId: first.runId,
      pid: expect.any(Number),
      ports: { [String(CONTAINER_SERVER_PORT)]: first.port },
    });

    const ping = await containerCall(first, "GET", "/api/ping");
    expect(ping).toMatchObject({ status: 200, body: { status: "ok" } });
    // The key's workspace is its folder under the data directory.
    const pwd = await containerCall(first, "POST", "/api/execute", { command: "pwd" });
    const workspace = join(dataDir.path, "pool-one", "workspace");
    expect(realpathSync(pwd.body.stdout.trim())).toBe(realpathSync(workspace));
    expect(existsSync(join(dataDir.path, "pool-one", "container.pid"))).toBe(true);
  });

  it("keeps the containers of different keys apart", async () => {
    const a = await pool.start("pool-a", {});
    const b = await pool.start("pool-b", {});
    expect(b.port).not.toBe(a.port);
    expect(b.runId).not.toBe(a.runId);
    await containerCall(a, "POST", "/api/execute", { command: "echo a > mark" });
    const seen = await containerCall(b, "POST", "/api/execute", { command: "cat mark 2>/dev/null || echo none" });
    expect(seen.body.stdout).toBe("none\n");
    await Promise.all([pool.destroy("pool-a"), pool.destroy("pool-b")]);
  });

  it("destroys a container and remembers how its run ended", async () => {
    const container = await pool.start("pool-destroy", {});
    const pid = container.info().pid!;
    const ended = await pool.destroy("pool-destroy");
    expect(ended).toMatchObject({ key: "pool-destroy", running: false, runId: container.runId, exitCode: 137, signal: "SIGKILL" });
    expect(isRunning(pid)).toBe(false);
    expect(pool.info("pool-destroy")).toEqual(ended);
    expect(existsSync(join(dataDir.path, "pool-destroy", "container.pid"))).toBe(false);
    // Destroying again, or a key that never ran, is harmless.
    expect(await pool.destroy("pool-destroy")).toMatchObject({ running: false, runId: container.runId });
    expect(await pool.destroy("pool-never")).toEqual({ key: "pool-never", running: false });
  });

  it("answers a wait for exit early when the run ends, and at once for another run", async () => {
    const container = await pool.start("pool-wait", {});
    expect(await pool.waitForExit("pool-wait", container.runId, 0)).toMatchObject({ running: true, runId: container.runId });
    expect(await pool.waitForExit("pool-wait", "another-run", 10_000)).toEqual({ key: "pool-wait", runId: "another-run", running: false });

    const waiting = pool.waitForExit("pool-wait", container.runId, 30_000);
    // SIGTERM: the server stops its processes and exits on its own, with code 0.
    expect(pool.signal("pool-wait", 15)).toMatchObject({ runId: container.runId });
    expect(await waiting).toMatchObject({ running: false, runId: container.runId, exitCode: 0 });
  });

  it("lets a stopping container finish going before the key's next one starts", async () => {
    const first = await pool.start("pool-restart", {});
    pool.signal("pool-restart", 15);
    const next = await pool.start("pool-restart", {});
    expect(next.runId).not.toBe(first.runId);
    expect(first.running).toBe(false);
    expect(next.running).toBe(true);
    expect(pool.info("pool-restart")).toMatchObject({ running: true, runId: next.runId });
    await pool.destroy("pool-restart");
  });

  it("stops every container at once", async () => {
    const containers = await Promise.all(["pool-all-1", "pool-all-2"].map((key) => pool.start(key, {})));
    await pool.stopAll();
    expect(pool.size).toBe(0);
    for (const container of containers) expect(container.running).toBe(false);
  });
});
