/**
 * What a container's host uid may leave behind once the container is gone, and which keeps the uid
 * from being lent to another sandbox: a process still running as it (a host user who ran a program
 * the sandbox planted, or the sandbox's last processes not yet reaped), and setuid or setgid files it
 * owns in the host folders it could write (`readWritePaths`). A uid with either is never lent: the next
 * sandbox would be that process's user, or that file's.
 *
 * The seccomp filter (seccomp.ts) keeps a container from making such a file at all; clearing the bits
 * on release is the second wall. The clearing runs as the uid itself, so a folder another live
 * sandbox swaps for a link meanwhile leads it only to files the uid owns anyway; a check as root
 * afterwards (which only reads, and follows no link) says whether any is left.
 */
import { execFile } from "node:child_process";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Every uid and gid some process of the machine has (real, effective, saved or file-system), from /proc. */
export function idsInUse(): Set<number> {
  const ids = new Set<number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${name}/status`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    for (const line of status.split("\n")) {
      if (!line.startsWith("Uid:") && !line.startsWith("Gid:")) continue;
      for (const id of line.slice(4).trim().split(/\s+/)) ids.add(Number(id));
    }
  }
  return ids;
}

/**
 * Clears the setuid and setgid bits of every file `uid` owns under `paths` (never following a link).
 * Resolves whether none is left; false keeps the uid from being lent.
 */
export async function clearSetuidFiles(uid: number, paths: readonly string[]): Promise<boolean> {
  const present = paths.filter((path) => lstatSync(path, { throwIfNoEntry: false })?.isDirectory());
  if (present.length === 0) return true;
  const match = ["-uid", String(uid), "-perm", "/6000", "!", "-type", "l"];
  // Folders the uid may not read are skipped with an error: the check below sees into them.
  await run("find", ["-P", ...present, ...match, "-exec", "chmod", "ug-s", "{}", "+"], { uid, gid: uid, cwd: "/", maxBuffer: 1024 ** 2 }).catch(() => undefined);
  try {
    const { stdout } = await run("find", ["-P", ...present, ...match, "-print", "-quit"], { maxBuffer: 1024 ** 2 });
    return stdout.trim() === "";
  } catch (error) {
    // An exit code: find walked all it could (a folder gone meanwhile), and anything it printed is one left.
    const { code, stdout } = error as { code?: unknown; stdout?: string };
    return typeof code === "number" && (stdout ?? "").trim() === "";
  }
}
