/**
 * Enforcing a sandbox's limits with the kernel's control groups, where this machine lets the runtime
 * make them: cgroup v2 when the runtime's own group is delegated to it (systemd hosts), the v1
 * controllers (pids, memory, cpu) when they are writable (a root runtime on a hybrid layout).
 * Sandbox groups are made below the runtime's own group, so whatever bounds the runtime bounds them.
 * Elsewhere nothing is made and rlimits are all there is (processes per host uid, open files).
 *
 * Where a pids group exists it alone bounds the container's processes (no `ulimit -u`: that counts a
 * host uid's processes, and is checked before the group, so it would bite first). The memory group
 * counts kernel memory too (cgroup v2 always; v1 unless the kernel was booted with
 * cgroup.memory=nokmem), so what a container's open files, sockets and pipes cost the kernel is
 * charged to it, within its memory limit.
 *
 * A container joins its group before bwrap runs (the launch wrapper writes its own pid into
 * `cgroup.procs`, which is why that one file belongs to the container's user), so everything it
 * starts is counted. Inside, the container sees its own group at /sys/fs/cgroup, read-only, as a
 * program in a container does: that is where its server reads its limits and use.
 */
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { HostUser } from "./host-users.ts";
import type { SandboxLimits } from "./limits.ts";

export type LimitsMechanism =
  | { kind: "cgroup2"; parent: string }
  | { kind: "cgroup1"; parents: { pids: string; memory: string; cpu: string } }
  | { kind: "rlimits"; reason: string };

const ROOT = "/sys/fs/cgroup";
const V1 = ["pids", "memory", "cpu"] as const;

/** Where this process's groups are, per controller (v1) or unified (""), from /proc/self/cgroup. */
function ownGroups(): Map<string, string> {
  const groups = new Map<string, string>();
  for (const line of readFileSync("/proc/self/cgroup", "utf8").trim().split("\n")) {
    const [, controllers, path] = line.split(":");
    for (const controller of controllers!.split(",")) groups.set(controller, path!);
  }
  return groups;
}

/** Finds how limits can be enforced here, making the runtime's parent groups (`name`) if it can. */
export function detectLimits(name: string): LimitsMechanism {
  try {
    const groups = ownGroups();
    const unified = groups.get("");
    if (unified !== undefined && existsSync(join(ROOT, "cgroup.controllers"))) {
      const own = join(ROOT, unified);
      const available = readFileSync(join(own, "cgroup.controllers"), "utf8");
      if (["pids", "memory", "cpu"].every((c) => available.includes(c))) {
        const parent = join(own, name);
        sweepGroupsOfGoneRuntimes(own, name);
        mkdirSync(parent, { recursive: true });
        writeFileSync(join(parent, "cgroup.subtree_control"), "+pids +memory +cpu");
        return { kind: "cgroup2", parent };
      }
    }
    if (V1.every((controller) => existsSync(join(ROOT, controller, "cgroup.procs")))) {
      const parents = Object.fromEntries(
        V1.map((controller) => {
          const parent = join(ROOT, controller, groups.get(controller) ?? "/", name);
          sweepGroupsOfGoneRuntimes(dirname(parent), name);
          mkdirSync(parent, { recursive: true });
          return [controller, parent];
        }),
      ) as { pids: string; memory: string; cpu: string };
      return { kind: "cgroup1", parents };
    }
    return { kind: "rlimits", reason: "no cgroup controllers this runtime may use" };
  } catch (error) {
    return { kind: "rlimits", reason: `cgroups could not be made (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  }
}

export interface SandboxGroup {
  /** The `cgroup.procs` files the container's first process writes its pid to. */
  procsFiles: string[];
  /** Host folder → where the container sees it (read-only). */
  binds: [string, string][];
  /** Sets its share of contended CPU (cpu.weight's scale: 100 is an ordinary process's). */
  weigh(cpuWeight: number): void;
  /** Removes the groups once nothing runs in them. */
  remove(): void;
}

/** Makes the groups of one container (named after its run) with its limits; undefined with rlimits only. */
export function makeSandboxGroup(mechanism: LimitsMechanism, run: string, limits: SandboxLimits, user: HostUser | undefined): SandboxGroup | undefined {
  if (mechanism.kind === "rlimits") return undefined;
  const dirs: string[] = [];
  const binds: [string, string][] = [];
  if (mechanism.kind === "cgroup2") {
    const dir = join(mechanism.parent, run);
    mkdirSync(dir);
    dirs.push(dir);
    writeFileSync(join(dir, "pids.max"), String(limits.pids));
    writeFileSync(join(dir, "memory.max"), String(limits.memoryBytes));
    writeFileSync(join(dir, "memory.swap.max"), "0");
    binds.push([dir, ROOT]);
  } else {
    for (const controller of V1) {
      const dir = join(mechanism.parents[controller], run);
      mkdirSync(dir);
      dirs.push(dir);
      binds.push([dir, join(ROOT, controller)]);
    }
    writeFileSync(join(dirs[0]!, "pids.max"), String(limits.pids));
    writeFileSync(join(dirs[1]!, "memory.limit_in_bytes"), String(limits.memoryBytes));
  }
  const weigh = (cpuWeight: number) => {
    if (mechanism.kind === "cgroup2") writeFileSync(join(dirs[0]!, "cpu.weight"), String(cpuWeight));
    // v1 shares: 1024 is an ordinary process's, as weight 100 is in v2.
    else writeFileSync(join(dirs[2]!, "cpu.shares"), String(Math.max(2, Math.round((cpuWeight * 1024) / 100))));
  };
  weigh(limits.cpuWeight);
  const procsFiles = dirs.map((dir) => join(dir, "cgroup.procs"));
  // Only the container's own user may put a process in its group (it moves itself in before bwrap).
  if (user) for (const file of procsFiles) chownSync(file, user.uid, user.gid);
  return {
    procsFiles,
    binds,
    weigh,
    remove() {
      for (const dir of dirs) {
        try {
          rmdirSync(dir);
        } catch {
          // a process not yet reaped: the next runtime start sweeps it
        }
      }
    },
  };
}

/**
 * Removes the groups runtimes that are gone left in `dir` (a runtime killed outright removes nothing;
 * one that stopped leaves its own parent group): siblings of `name` named as it is but for the pid,
 * whose process no longer exists, with the sandbox groups in them. A group with a process in it (a
 * container server that outlived its runtime, for a moment) cannot be removed and stays for the next.
 */
function sweepGroupsOfGoneRuntimes(dir: string, name: string): void {
  const prefix = name.replace(/\d+$/, "");
  let entries: string[];
  try {
    entries = readdirSync(dir).filter((entry) => entry.startsWith(prefix) && entry !== name && /^\d+$/.test(entry.slice(prefix.length)));
  } catch {
    return;
  }
  for (const entry of entries) {
    if (existsSync(`/proc/${entry.slice(prefix.length)}`)) continue;
    const parent = join(dir, entry);
    try {
      for (const child of readdirSync(parent, { withFileTypes: true })) if (child.isDirectory()) rmdirSync(join(parent, child.name));
      rmdirSync(parent);
    } catch {
      // still in use, or gone meanwhile
    }
  }
}

export function describeMechanism(mechanism: LimitsMechanism): string {
  switch (mechanism.kind) {
    case "cgroup2":
      return "cgroup v2";
    case "cgroup1":
      return "cgroup v1 (pids, memory, cpu)";
    default:
      return `rlimits (${mechanism.reason})`;
  }
}
