/**
 * Helpers for the local runtime's tests: temporary data directories, and what /proc says about a
 * process (a zombie has exited, it only waits for its parent to collect it), calls to the runtime and
 * its container servers with their secrets. Polling and the process list come from the container
 * tests' helpers.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import type { RunningRuntime } from "../../runtime/server.ts";
import { processesWithEnv } from "../../server-kit/tagged-processes.ts";
import { call, processes, type JsonReply } from "../container/helpers.ts";

export interface DataDir {
  path: string;
  remove(): void;
}

export function tempDataDir(): DataDir {
  const path = mkdtempSync(join(tmpdir(), "sandbox-runtime-test-"));
  // Sandbox containers run as other host users: they pass through (never list) the folder to their own.
  chmodSync(path, 0o711);
  return {
    path,
    remove: () => {
      unmountUnder(path);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/**
 * Takes off what is still mounted under `dir` (deepest first): the disks of sandboxes whose runtime a
 * test killed outright, which no runtime will start on this folder again to reap.
 */
function unmountUnder(dir: string): void {
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((point): point is string => point !== undefined && point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const point of points) spawnSync("umount", ["--lazy", point], { stdio: "ignore" });
}

/** Pids of processes that have not exited (zombies have). */
export function runningPids(): Set<number> {
  return new Set(processes().filter((p) => p.state !== "Z").map((p) => p.pid));
}

export function isRunning(pid: number): boolean {
  return runningPids().has(pid);
}

/** Running processes whose environment has `name=value`. */
export function runningWithEnv(name: string, value: string): number[] {
  const running = runningPids();
  return processesWithEnv(name, value).filter((pid) => running.has(pid));
}

/** A call to the runtime's API, with its secret. */
export function runtimeCall(runtime: RunningRuntime, method: string, path: string, body?: unknown): Promise<JsonReply> {
  return call(runtime.url, method, path, body, runtime.secret);
}

/** A call to a container's server, with the secret it was started with. */
export function containerCall(container: ContainerProcess, method: string, path: string, body?: unknown): Promise<JsonReply> {
  return call(`http://127.0.0.1:${container.port}`, method, path, body, container.secret);
}

export { call, eventually, type JsonReply } from "../container/helpers.ts";
