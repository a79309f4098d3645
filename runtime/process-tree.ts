/**
 * Process trees. The container server starts every command in its own process group, so killing
 * the server's group alone would leave the commands behind; a container stop must take them all, as
 * a real container's teardown does. We snapshot the tree (pid → children) before signalling.
 */
import { readdirSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

function parentMapFromProc(): Map<number, number[]> | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // Field 2 (comm) may contain spaces and parentheses: parse after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(rest[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  return children;
}

function parentMapFromPs(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  let out = "";
  try {
    out = execFileSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8" });
  } catch {
    return children;
  }
  for (const line of out.split("\n")) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (!pid || ppid === undefined || Number.isNaN(ppid)) continue;
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  return children;
}

/** Every descendant of `root` (not `root` itself), parents before children. */
export function descendantsOf(root: number): number[] {
  const children = parentMapFromProc() ?? parentMapFromPs();
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const child of children.get(pid) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** Sends `signal` to each pid and to the process group it leads, ignoring ones already gone. */
export function signalAll(pids: number[], signal: NodeJS.Signals | number): void {
  for (const pid of pids) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, signal);
      } catch {
        // not a group leader, or already gone
      }
    }
  }
}
