/**
 * No survivors of a container: what its commands started outside their process groups (`setsid`,
 * double forks, `nohup`) ends when the sandbox is destroyed, when its container server crashes, and
 * when a runtime that was killed outright is started again; after a container restart nothing of the
 * old run keeps running. Under bwrap a daemon started in the background ends with the command that
 * started it: the command's pid namespace goes with it.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { directLauncher } from "../../runtime/launch.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import { startRuntime } from "../../runtime/server.ts";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { call, containerCall, eventually, runningPids, tempDataDir, type DataDir } from "./helpers.ts";

/** Starts daemons three ways and prints their pids: a new session, a double fork, nohup. */
const DAEMONS =
  "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!; " +
  "(setsid sh -c 'sleep 301 & echo $!' >&3 3>&- </dev/null 2>/dev/null &) 3>&1 | head -1; " +
  "nohup setsid sleep 302 >/dev/null 2>&1 </dev/null & echo $!";

const alive = (pids: number[]) => {
  const running = runningPids();
  return pids.filter((pid) => running.has(pid));
};

async function startDaemons(container: ContainerProcess): Promise<number[]> {
  const { body } = await containerCall(container, "POST", "/api/execute", { command: DAEMONS });
  const pids = body.stdout.trim().split("\n").map(Number);
  expect(pids).toHaveLength(3);
  expect(alive(pids)).toEqual(pids);
  return pids;
}

let dataDir: DataDir;
let pool: ContainerPool;
beforeAll(() => {
  dataDir = tempDataDir();
  pool = new ContainerPool({ dataDir: dataDir.path, launcher: directLauncher, isolation: { mode: "none", env: {} }, stopGraceMs: 1_000 });
});
afterAll(async () => {
  await pool.stopAll();
  dataDir.remove();
});

/**
 * A runtime of its own, as a separate process that can be killed without a word, with a sandbox
 * whose command left DAEMONS behind.
 */
async function daemonsUnderOwnRuntime(dir: string, key: string) {
  const child = spawn(process.execPath, [fileURLToPath(new URL("../../runtime/main.ts", import.meta.url))], {
    env: { ...process.env, RUNTIME_PORT: "0", SANDBOX_DATA_DIR: dir, SANDBOX_ISOLATION: "none", SANDBOX_WARM_POOL: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  expect(await eventually(() => output.includes("its secret is in"), 15_000)).toBe(true);
  const url = /listening on (http:\/\/\S+)/.exec(output)![1]!;
  const secret = readFileSync(join(dir, "runtime.secret"), "utf8").trim();
  const started = await call(url, "POST", `/containers/${key}/start`, {}, secret);
  const server = `http://127.0.0.1:${started.body.ports["3000"]}`;
  const { body } = await call(server, "POST", "/api/execute", { command: DAEMONS }, started.body.secret);
  const pids: number[] = body.stdout.trim().split("\n").map(Number);
  return { child, started, pids };
}

describe("daemons of an unconfined sandbox", () => {
  it("end when the sandbox is destroyed, and a new run starts without them", async () => {
    const pids = await startDaemons(await pool.start("surv-destroy", {}));
    await pool.destroy("surv-destroy");
    expect(await eventually(() => alive(pids).length === 0, 3_000)).toBe(true);
    await pool.start("surv-destroy", {});
    expect(alive(pids)).toEqual([]);
  });

  it("end when the container server crashes", async () => {
    const container = await pool.start("surv-crash", {});
    const pids = await startDaemons(container);
    process.kill(container.info().pid!, "SIGKILL");
    await container.exited;
    expect(await eventually(() => alive(pids).length === 0, 3_000)).toBe(true);
  });

  it("end when a runtime killed outright is started again", async () => {
    const dir = join(dataDir.path, "restart");
    const { child, started, pids } = await daemonsUnderOwnRuntime(dir, "surv-restart");
    expect(alive(pids)).toEqual(pids);

    // The runtime and its server die without cleaning up: the daemons are left.
    child.kill("SIGKILL");
    process.kill(started.body.pid, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(alive(pids)).toEqual(pids);

    const again = await startRuntime({ dataDir: dir, isolation: "none" });
    try {
      expect(await eventually(() => alive(pids).length === 0, 3_000)).toBe(true);
    } finally {
      await again.close();
    }
  });
  it("end with their server when the runtime is killed outright: the orphaned server stops by itself", async () => {
    const { child, started, pids } = await daemonsUnderOwnRuntime(join(dataDir.path, "orphan"), "surv-orphan");
    expect(alive([started.body.pid, ...pids])).toEqual([started.body.pid, ...pids]);

    // Nobody restarts the runtime: the server sees its parent gone and stops, with the daemons.
    child.kill("SIGKILL");
    expect(await eventually(() => alive([started.body.pid, ...pids]).length === 0, 10_000)).toBe(true);
  });
});

describe.skipIf(!detectIsolation().bwrap.available)("a daemon in a sandbox's container", () => {
  it("outlives the command that started it, as in a container, and ends with the container", async () => {
    const confined = new ContainerPool({ dataDir: join(dataDir.path, "bwrap"), launcher: directLauncher, isolation: { mode: "bwrap", env: {} } });
    try {
      const container = await confined.start("surv-bwrap", {});
      const tag = `sleep-${process.pid}-${Date.now()}`;
      // A daemon, and the command returns: the daemon is named by a marker on its command line.
      const { body } = await containerCall(container, "POST", "/api/execute", {
        command: `setsid bash -c 'exec -a ${tag} sleep 300' >/dev/null 2>&1 </dev/null & echo started`,
      });
      expect(body.stdout).toBe("started\n");
      const withMarker = () =>
        [...runningPids()].filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(tag);
          } catch {
            return false;
          }
        });
      expect(await eventually(() => withMarker().length === 1, 3_000)).toBe(true);
      // The next command sees it among the container's processes.
      const ps = await containerCall(container, "POST", "/api/execute", { command: `ps -eo args | grep -c '^${tag}'` });
      expect(ps.body.stdout).toBe("1\n");
      // Destroyed, the container takes it along: nothing of it is left on the host.
      await confined.destroy("surv-bwrap");
      expect(await eventually(() => withMarker().length === 0, 3_000)).toBe(true);
    } finally {
      await confined.stopAll();
    }
  });
});
