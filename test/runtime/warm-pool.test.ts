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

const fullPool = async () => expect(await eventually(() => warm.warmCount === 2, 10_000)).toBe(true);

describe("the warm pool", () => {
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
  });

  it("keeps warm servers out of the sandboxes' count and stops them with the pool", async () => {
    const pool = new ContainerPool({ dataDir: join(dataDir.path, "stop"), launcher: directLauncher, isolation: { mode: "none", env: {} }, warmServers: 1 });
    expect(await eventually(() => pool.warmCount === 1, 10_000)).toBe(true);
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

  it.skipIf(!detectIsolation().bwrap.available)("runs its commands under the bwrap it asked for, as a cold one does", async () => {
    const seen = await compare("wp-bwrap", { isolation: { isolation: "bwrap", allowNetwork: false } });
    expect(seen.isolation).toMatchObject({ mode: "bwrap", allowNetwork: false, pidNamespace: true });
    const container = await warm.start("wp-bwrap", {});
    const ps = await containerCall(container, "POST", "/api/execute", { command: "ls /proc | grep -c '^[0-9]'" });
    expect(Number(ps.body.stdout.trim())).toBeLessThan(10);
  });
});
