/**
 * A runtime killed outright (SIGKILL: no chance to unmount, detach or stop anything) leaves nothing
 * behind on the host: its sandbox's disk was mounted in the runtime's own mount namespace only (the
 * host never saw it; the sandbox's files are read through the runtime's root), and once the runtime
 * is gone no mount of it remains anywhere, no loop device is attached to its image, no process of its
 * run lives, and nothing holds its network namespace. What the sandbox wrote is on its disk, found by
 * the next runtime on that data folder, which sweeps the control groups the killed one had made.
 * Root only (mounting).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNS_DIR } from "../../runtime/server-child.ts";
import { startRuntime } from "../../runtime/server.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { processesTagged } from "../../server-kit/tagged-processes.ts";
import { call, eventually, runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";

const canMount = process.getuid?.() === 0 && spawnSync("mkfs.ext4", ["-V"], { stdio: "ignore" }).status === 0 && detectIsolation().bwrap.available;

let dataDir: DataDir;
let child: ChildProcess | undefined;
beforeAll(() => {
  dataDir = tempDataDir();
});
afterAll(() => {
  child?.kill("SIGKILL");
  dataDir.remove();
});

/** Mount points under `dir` in the mount namespace of process `pid`. */
function mountsUnder(pid: number | "self", dir: string): string[] {
  try {
    return readFileSync(`/proc/${pid}/mountinfo`, "utf8")
      .split("\n")
      .map((line) => line.split(" ")[4] ?? "")
      .filter((point) => point.startsWith(`${dir}/`));
  } catch {
    return [];
  }
}

/** Mount points under `dir` in any process's mount namespace on this machine. */
function mountsAnywhere(dir: string): string[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => mountsUnder(Number(pid), dir));
}

/** Loop devices attached to a file under `dir`. */
function loopsUnder(dir: string): string[] {
  return readdirSync("/sys/block")
    .filter((name) => name.startsWith("loop"))
    .filter((name) => {
      try {
        return readFileSync(`/sys/block/${name}/loop/backing_file`, "utf8").startsWith(`${dir}/`);
      } catch {
        return false; // not attached
      }
    });
}

/** Control groups the runtime of pid `pid` made (its sandboxes' groups are in them), in any hierarchy. */
function groupsOf(pid: number): string[] {
  const found = execFileSync("find", ["/sys/fs/cgroup", "-maxdepth", "6", "-type", "d", "-name", `edge-sandbox-${pid}`], { encoding: "utf8" });
  return found.split("\n").filter(Boolean);
}

/** Processes in network namespace `net`. */
function inNamespace(net: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/ns/net`) === net;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.skipIf(!canMount)("a runtime killed outright", () => {
  it("leaves no mount, no loop device, no process and no namespace behind; its sandbox's files stay on its disk", { timeout: 90_000 }, async () => {
    const dir = join(dataDir.path, "killed");
    child = spawn(process.execPath, [fileURLToPath(new URL("../../runtime/main.ts", import.meta.url))], {
      env: { ...process.env, RUNTIME_PORT: "0", SANDBOX_DATA_DIR: dir, SANDBOX_ISOLATION: "bwrap", SANDBOX_WARM_POOL: "0", SANDBOX_DISK_MAX: "64M" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    expect(await eventually(() => output.includes("its secret is in"), 20_000)).toBe(true);
    const url = /listening on (http:\/\/\S+)/.exec(output)![1]!;
    const secret = readFileSync(join(dir, "runtime.secret"), "utf8").trim();
    const started = await call(url, "POST", "/containers/killed-a/start", { isolation: { allowNetwork: true } }, secret);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const run = (command: string) => call(`http://127.0.0.1:${started.body.ports["3000"]}`, "POST", "/api/execute", { command }, started.body.secret);
    const inside = await run("echo kept > /workspace/kept.txt && readlink /proc/self/ns/net");
    const net = String(inside.body.stdout).trim();
    expect(net).toMatch(/^net:\[\d+\]$/);

    // Its disk is mounted where the runtime is, not where the host is: the host reads through the runtime's root.
    const sandboxDir = join(dir, "killed-a");
    expect(mountsUnder(child.pid!, dir)).toContain(sandboxDir);
    expect(mountsUnder("self", dir)).toEqual([]);
    expect(readFileSync(join(`/proc/${child.pid}/root`, sandboxDir, "workspace", "kept.txt"), "utf8")).toBe("kept\n");
    expect(existsSync(join(sandboxDir, "workspace", "kept.txt"))).toBe(false);
    expect(loopsUnder(dir)).toHaveLength(1);
    const runs = readdirSync(join(dir, RUNS_DIR));
    expect(runs).toHaveLength(1);
    expect(processesTagged(runs[0]!).length).toBeGreaterThan(0);
    const groups = groupsOf(child.pid!);

    const gone = new Promise((resolve) => child!.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;
    // Its server sees it gone and stops, taking the sandbox's processes along; the namespace goes with the last of them.
    expect(await eventually(() => processesTagged(runs[0]!).length === 0, 15_000)).toBe(true);
    expect(await eventually(() => inNamespace(net).length === 0, 15_000)).toBe(true);
    expect(await eventually(() => mountsAnywhere(dir).length === 0 && loopsUnder(dir).length === 0, 15_000), JSON.stringify({ mounts: mountsAnywhere(dir), loops: loopsUnder(dir) })).toBe(true);

    // The next runtime on that data folder finds what the sandbox wrote, on its disk.
    const again = await startRuntime({ dataDir: dir, isolation: "bwrap", warmServers: 0 });
    try {
      const restarted = await runtimeCall(again, "POST", "/containers/killed-a/start", {});
      expect(restarted.status, JSON.stringify(restarted.body)).toBe(200);
      const read = await call(`http://127.0.0.1:${restarted.body.ports["3000"]}`, "POST", "/api/execute", { command: "cat /workspace/kept.txt" }, restarted.body.secret);
      expect(read.body.stdout).toBe("kept\n");
      if (again.pool.containerSettings.mechanism().kind !== "rlimits") expect(groups.length).toBeGreaterThan(0);
      // The groups the runtime killed outright had made are gone, swept by the next one (where there were any).
      expect(groupsOf(child.pid!), JSON.stringify(groups)).toEqual([]);
    } finally {
      await again.close();
    }
  });
});
