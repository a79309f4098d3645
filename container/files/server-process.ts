/**
 * The one place the file routes never reach: the container server's own process entries in /proc.
 * The file routes act as the server, not as a command, so `/proc/self`, `/proc/thread-self`,
 * `/dev/fd`, `/dev/stdin` and `/proc/<server pid>` all name the server itself: its memory (which the
 * kernel lets a process read and write in itself, never a command in it), its descriptors (the pipe
 * its secret came on, its listening socket) and its environment. Everything else in the sandbox is
 * the sandbox's own, so this is the whole rule.
 *
 * Symbolic links are followed by the walk one verified step at a time (locate.ts), so every way
 * there (`self`, `/dev/fd`, a link a command plants, a folder swapped for one) ends as a step into a
 * `<pid>` directory of a procfs root; DirHandle.openChild asks here before every such step. Refused
 * too: the processes that started the server (a container's init; on a host, the runtime), which
 * are not the sandbox's commands either.
 */
import { existsSync, readFileSync } from "node:fs";
import { stat, statfs } from "node:fs/promises";

/** statfs's f_type of procfs. */
const PROC_SUPER_MAGIC = 0x9fa0;
/** The inode of every procfs root. */
const PROC_ROOT_INO = 1;

let ancestors: ReadonlySet<number> | undefined;

/** Whether `name` (one component, in the folder at `dirPath`) is a process directory of the server or of a process that started it. */
export async function isServerProcessEntry(dirPath: string, name: string): Promise<boolean> {
  if (!/^[1-9][0-9]{0,9}$/.test(name)) return false;
  if (!isServerProcessId(Number(name))) return false;
  return isProcRoot(dirPath);
}

/** The errno-like code of the refusal, which errors.ts turns into PERMISSION_DENIED naming the caller's path. */
export const SERVER_PROCESS_ERRNO = "ESERVERPROCESS";

export function serverProcessRefusal(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${path}: the sandbox's server process is not served by the file API`), { code: SERVER_PROCESS_ERRNO, path });
}

function isServerProcessId(id: number): boolean {
  if (id === process.pid || existsSync(`/proc/self/task/${id}`)) return true;
  ancestors ??= ancestorIds();
  return ancestors.has(id);
}

async function isProcRoot(dirPath: string): Promise<boolean> {
  try {
    const [fs, stats] = await Promise.all([statfs(dirPath), stat(dirPath)]);
    return fs.type === PROC_SUPER_MAGIC && stats.ino === PROC_ROOT_INO;
  } catch {
    // Unknown is refused: the caller is about to step into a directory named like the server.
    return true;
  }
}

/** The server's parent, its parent, … up to the first process (read once: they outlive the server). */
function ancestorIds(): Set<number> {
  const found = new Set<number>();
  let id = process.ppid;
  while (id > 0 && !found.has(id)) {
    found.add(id);
    id = parentOf(id);
  }
  return found;
}

function parentOf(id: number): number {
  try {
    const stat = readFileSync(`/proc/${id}/stat`, "latin1");
    // "pid (comm) state ppid …": the command name may hold spaces and parentheses.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return 0;
  }
}
