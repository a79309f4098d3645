/**
 * A control group shaped like a Cloudflare instance, for running the built image's server under the
 * memory (and, when asked, the CPU share) of the instance type it is deployed on. Made where the
 * local runtime makes its sandboxes' groups (runtime/container/cgroups.ts finds where that is: cgroup
 * v2 delegated, or the v1 controllers of a root runtime), so a machine that can run sandboxes with
 * limits can run this. Reads back what the kernel recorded: the high-water mark of memory use and
 * whether the out-of-memory killer ran.
 */
import { existsSync, readFileSync, rmdirSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectLimits } from "../../runtime/container/cgroups.ts";

export interface InstanceGroup {
  /** The `cgroup.procs` files a process writes its pid to, to join. */
  procsFiles: string[];
  /** Highest memory use (bytes) since the group was made, page cache included. */
  peakBytes(): number;
  /** Processes the kernel's out-of-memory killer ended in the group. */
  oomKills(): number;
  remove(): void;
}

const PARENT = "edge-sandbox-instances";
const CPU_PERIOD_US = 100_000;

const readNumber = (file: string) => Number(readFileSync(file, "utf8").trim());
const counter = (file: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(readFileSync(file, "utf8"))?.[1] ?? 0);

/** Undefined where no group can be made here (no delegated cgroup v2, no writable v1 controllers). */
export function makeInstanceGroup(name: string, limits: { memoryBytes: number; vcpu?: number }): InstanceGroup | undefined {
  const mechanism = detectLimits(PARENT);
  if (mechanism.kind === "rlimits") return undefined;
  const quota = limits.vcpu === undefined ? undefined : Math.max(1000, Math.round(limits.vcpu * CPU_PERIOD_US));
  if (mechanism.kind === "cgroup2") {
    const dir = join(mechanism.parent, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "memory.max"), String(limits.memoryBytes));
    writeFileSync(join(dir, "memory.swap.max"), "0");
    if (quota !== undefined) writeFileSync(join(dir, "cpu.max"), `${quota} ${CPU_PERIOD_US}`);
    return {
      procsFiles: [join(dir, "cgroup.procs")],
      peakBytes: () => readNumber(join(dir, "memory.peak")),
      oomKills: () => counter(join(dir, "memory.events"), "oom_kill"),
      remove: () => rmdirSync(dir),
    };
  }
  const memory = join(mechanism.parents.memory, name);
  const cpu = join(mechanism.parents.cpu, name);
  mkdirSync(memory);
  mkdirSync(cpu);
  writeFileSync(join(memory, "memory.limit_in_bytes"), String(limits.memoryBytes));
  // With swap accounting, swap must not stretch the limit either (this machine has none otherwise).
  if (existsSync(join(memory, "memory.memsw.limit_in_bytes"))) writeFileSync(join(memory, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes));
  if (quota !== undefined) {
    writeFileSync(join(cpu, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
    writeFileSync(join(cpu, "cpu.cfs_quota_us"), String(quota));
  }
  return {
    procsFiles: [join(memory, "cgroup.procs"), join(cpu, "cgroup.procs")],
    peakBytes: () => readNumber(join(memory, "memory.max_usage_in_bytes")),
    oomKills: () => counter(join(memory, "memory.oom_control"), "oom_kill"),
    remove: () => {
      rmdirSync(memory);
      rmdirSync(cpu);
    },
  };
}
