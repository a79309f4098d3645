/**
 * What one sandbox may take of the machine: processes, memory, CPU share, open files and disk. The
 * operator sets them for every sandbox (the runtime's environment); defaults leave room for real
 * work (a build, a dev server, a notebook) and stop a fork bomb or a runaway allocation from taking
 * the host. How they are enforced (cgroups where the machine lets the runtime make them, rlimits
 * otherwise) is cgroups.ts; every container gets the same numbers either way.
 *
 *   SANDBOX_PIDS_MAX     processes and threads at most (default 1024)
 *   SANDBOX_MEMORY_MAX   bytes, or with K/M/G suffix (default 2G)
 *   SANDBOX_CPU_WEIGHT   share of contended CPU, 1–10000, 100 being an ordinary process's (default 100)
 *   SANDBOX_NOFILE_MAX   open files per process (default 4096)
 *   SANDBOX_DISK_MAX     bytes it may write, or with K/M/G/T suffix (default 4G, the disk of a
 *                        `basic` instance on Cloudflare; enforced where a root runtime mounts each
 *                        sandbox a disk of its own: disk.ts)
 *
 * Open files are bounded per sandbox too, not only per process: at most pids × open files in all (every
 * process a descriptor table of its own at most), lowered where that product would exceed half of the
 * host's file table (`fitFileTable`), and what they cost the kernel is charged to the sandbox's memory
 * group (cgroups.ts). Files open by one sandbox never leave the host's other users without any.
 */
import { readFileSync } from "node:fs";

export interface SandboxLimits {
  pids: number;
  memoryBytes: number;
  cpuWeight: number;
  openFiles: number;
  diskBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  pids: 1024,
  memoryBytes: 2 * 1024 ** 3,
  cpuWeight: 100,
  openFiles: 4096,
  diskBytes: 4 * 1024 ** 3,
};

/** Less than this and a sandbox cannot hold its own layer and a checkout. */
const MIN_DISK_BYTES = 16 * 1024 ** 2;

/** Fewer open files than this and ordinary programs (a shell, Node) fail to start. */
const MIN_OPEN_FILES = 64;

const SUFFIX: Record<string, number> = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

export function limitsFromEnv(env: Record<string, string | undefined>): SandboxLimits {
  const limits = { ...DEFAULT_SANDBOX_LIMITS };
  const whole = (name: string, min: number, max: number): number | undefined => {
    const text = env[name];
    if (text === undefined || text === "") return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${text}"`);
    return value;
  };
  limits.pids = whole("SANDBOX_PIDS_MAX", 16, 4_194_304) ?? limits.pids;
  limits.cpuWeight = whole("SANDBOX_CPU_WEIGHT", 1, 10_000) ?? limits.cpuWeight;
  limits.openFiles = whole("SANDBOX_NOFILE_MAX", MIN_OPEN_FILES, 1_048_576) ?? limits.openFiles;
  const bytes = (name: string, min: number, minText: string): number | undefined => {
    const text = env[name];
    if (!text) return undefined;
    const match = /^(\d+)([KMGT]?)$/i.exec(text.trim());
    const value = match ? Number(match[1]) * SUFFIX[match[2]!.toUpperCase()]! : NaN;
    if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be bytes (or K/M/G/T) of at least ${minText}, not "${text}"`);
    return value;
  };
  limits.memoryBytes = bytes("SANDBOX_MEMORY_MAX", 64 * 1024 ** 2, "64M") ?? limits.memoryBytes;
  limits.diskBytes = bytes("SANDBOX_DISK_MAX", MIN_DISK_BYTES, "16M") ?? limits.diskBytes;
  return limits;
}

/** The host's file table (fs.file-max), or undefined where it has no size to speak of (systemd raises it to 2^63 - 1). */
export function hostFileTable(): number | undefined {
  try {
    const size = Number(readFileSync("/proc/sys/fs/file-max", "utf8").trim());
    return Number.isSafeInteger(size) && size > 0 ? size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The limits with open files per process lowered, where needed, so that one sandbox's processes
 * together (pids × open files) hold at most half of the host's file table. Root is exempt from that
 * table's end, but every other user of the machine, other sandboxes among them, gets ENFILE there.
 */
export function fitFileTable(limits: SandboxLimits, fileTable: number | undefined): SandboxLimits {
  if (fileTable === undefined) return limits;
  const perProcess = Math.max(MIN_OPEN_FILES, Math.floor(fileTable / 2 / limits.pids));
  return perProcess < limits.openFiles ? { ...limits, openFiles: perProcess } : limits;
}
