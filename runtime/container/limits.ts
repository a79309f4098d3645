/**
 * What one sandbox may take of the machine: processes, memory, CPU share and open files. The
 * operator sets them for every sandbox (the runtime's environment); defaults leave room for real
 * work (a build, a dev server, a notebook) and stop a fork bomb or a runaway allocation from taking
 * the host. How they are enforced (cgroups where the machine lets the runtime make them, rlimits
 * otherwise) is cgroups.ts; every container gets the same numbers either way.
 *
 *   SANDBOX_PIDS_MAX     processes and threads at most (default 1024)
 *   SANDBOX_MEMORY_MAX   bytes, or with K/M/G suffix (default 2G)
 *   SANDBOX_CPU_WEIGHT   share of contended CPU, 1–10000, 100 being an ordinary process's (default 100)
 *   SANDBOX_NOFILE_MAX   open files per process (default 4096)
 */
export interface SandboxLimits {
  pids: number;
  memoryBytes: number;
  cpuWeight: number;
  openFiles: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  pids: 1024,
  memoryBytes: 2 * 1024 ** 3,
  cpuWeight: 100,
  openFiles: 4096,
};

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
  limits.openFiles = whole("SANDBOX_NOFILE_MAX", 64, 1_048_576) ?? limits.openFiles;
  const memory = env.SANDBOX_MEMORY_MAX;
  if (memory) {
    const match = /^(\d+)([KMGT]?)$/i.exec(memory.trim());
    const bytes = match ? Number(match[1]) * SUFFIX[match[2]!.toUpperCase()]! : NaN;
    if (!Number.isFinite(bytes) || bytes < 64 * 1024 ** 2) throw new Error(`SANDBOX_MEMORY_MAX must be bytes (or K/M/G/T) of at least 64M, not "${memory}"`);
    limits.memoryBytes = bytes;
  }
  return limits;
}
