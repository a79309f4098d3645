/**
 * Resource figures for `GET /api/info`. Inside a container the cgroup's limits are the truth (the
 * host's totals would overstate what a sandbox has), so cgroup v2 files are read first.
 */
import { readFile, statfs } from "node:fs/promises";
import os from "node:os";
import type { SandboxResources } from "../../protocol/info.ts";

const CGROUP = "/sys/fs/cgroup";

export async function readResources(workspace: string): Promise<SandboxResources> {
  const [memory, cpus, disk, processes] = await Promise.all([readMemory(), readCpus(), readDisk(workspace), readProcesses()]);
  return { memory, cpus, loadAverage: os.loadavg() as [number, number, number], disk, ...(processes ? { processes } : {}) };
}

/** The first of `files` that holds a number (the v2 file, then its v1 twin under its controller's folder). */
async function firstNumber(...files: string[]): Promise<number | undefined> {
  for (const file of files) {
    const value = await readNumber(file);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Processes (and threads) of the sandbox's group against its limit, where it sees its group. */
async function readProcesses(): Promise<SandboxResources["processes"]> {
  const current = await firstNumber(`${CGROUP}/pids.current`, `${CGROUP}/pids/pids.current`);
  if (current === undefined) return undefined;
  const max = await firstNumber(`${CGROUP}/pids.max`, `${CGROUP}/pids/pids.max`);
  return { current, ...(max === undefined ? {} : { max }) };
}

async function readMemory(): Promise<SandboxResources["memory"]> {
  const limit = await firstNumber(`${CGROUP}/memory.max`, `${CGROUP}/memory/memory.limit_in_bytes`);
  const current = await firstNumber(`${CGROUP}/memory.current`, `${CGROUP}/memory/memory.usage_in_bytes`);
  const hostTotal = os.totalmem();
  if (limit !== undefined && current !== undefined && limit < hostTotal) {
    return { totalBytes: limit, usedBytes: current, availableBytes: Math.max(0, limit - current), source: "cgroup" };
  }
  const available = (await readMeminfo("MemAvailable")) ?? os.freemem();
  return { totalBytes: hostTotal, usedBytes: hostTotal - available, availableBytes: available, source: "host" };
}

async function readCpus(): Promise<number> {
  const host = os.availableParallelism();
  const text = await readFile(`${CGROUP}/cpu.max`, "utf8").catch(() => undefined);
  const [quota, period] = text?.trim().split(/\s+/) ?? [];
  if (quota && quota !== "max" && period) {
    const limited = Math.ceil(Number(quota) / Number(period));
    if (Number.isFinite(limited) && limited > 0) return Math.min(host, limited);
  }
  return host;
}

async function readDisk(workspace: string): Promise<SandboxResources["disk"]> {
  const stats = await statfs(workspace);
  return {
    path: workspace,
    totalBytes: stats.blocks * stats.bsize,
    usedBytes: (stats.blocks - stats.bfree) * stats.bsize,
    availableBytes: stats.bavail * stats.bsize,
  };
}

async function readNumber(file: string): Promise<number | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  const value = Number(text?.trim());
  return text !== undefined && Number.isFinite(value) ? value : undefined;
}

async function readMeminfo(field: string): Promise<number | undefined> {
  const text = await readFile("/proc/meminfo", "utf8").catch(() => undefined);
  const match = text?.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
  return match ? Number(match[1]) * 1024 : undefined;
}
