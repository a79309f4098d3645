/**
 * A container server process as the runtime holds it: spawned in its own process group with its
 * output in a log file and its pid (and run tag) in a pid file, so a later runtime can reap what it
 * left. When it exits, everything its run started goes with it. Both files can move once, from a warm
 * server's own folder to the sandbox's folder it is assigned to.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { signalNumber } from "../protocol/process.ts";
import { processesTagged } from "../server-kit/tagged-processes.ts";
import type { Launch } from "./launch.ts";
import { descendantsOf, signalAll } from "./process-tree.ts";
import { randomUUID } from "node:crypto";
import { RUN_TAG_VAR, SERVER_STATUS, SERVER_STATUS_FD } from "../protocol/runtime.ts";

export interface ExitInfo {
  exitCode: number;
  signal?: string;
}

export const LOG_FILE = "container.log";
export const PID_FILE = "container.pid";
/**
 * Beside the runs' folders, a copy of each running server's pid file, named by its run: on the host's
 * disk, where a later runtime finds it even when the folder's own copy is on a sandbox's disk that
 * was mounted in the namespace of a runtime gone since (mount-namespace.ts).
 */
export const RUNS_DIR = ".runs";
/** How much of its log a server that exited keeps at hand (why it failed to start is at its end). */
const LAST_WORDS_CHARS = 16_000;

export class ServerChild {
  readonly child: ChildProcess;
  readonly runId: string;
  readonly exited: Promise<ExitInfo>;
  /** Resolves once the server says it has booted (a server waiting for its sandbox does), or exited. */
  readonly booted: Promise<void>;
  /** True once the server says it listens; false when it cannot say (no status pipe) or closed it without. */
  readonly listening: Promise<boolean>;
  /** The loopback port the server serves on, when its launch brought the listening socket. */
  readonly port: number | undefined;
  readonly #serverDepth: number;
  #dir: string;
  readonly #runFile: string;
  #exit: ExitInfo | undefined;
  #hasBooted = false;
  /** The log's end as it was at exit: its folder may be gone since (a disk unmounted with its container). */
  #lastWords = "";

  /**
   * Spawns `launch` in a new run (its tag in the server's environment, with `env`), its files in `dir`.
   * Its stdin stays open until `writeInput`.
   */
  constructor(launch: Launch, dir: string, env: Readonly<Record<string, string>> = {}, options: { bootedPipe?: boolean } = {}) {
    this.runId = randomUUID();
    this.#dir = dir;
    this.#runFile = join(dirname(dir), RUNS_DIR, this.runId);
    this.port = launch.port;
    this.#serverDepth = launch.serverDepth ?? 0;
    const log = openSync(this.logPath, "w");
    try {
      this.child = spawn(launch.command, launch.args, {
        cwd: launch.cwd,
        env: { ...launch.env, ...env, [RUN_TAG_VAR]: this.runId },
        // fd 3: where a server waiting for its sandbox says it has booted, then that it listens.
        stdio: options.bootedPipe || launch.fds ? ["pipe", log, log, options.bootedPipe ? "pipe" : "ignore", ...(launch.fds ?? [])] : ["pipe", log, log],
        detached: true, // own process group: a Ctrl-C meant for the runtime does not reach it directly
        ...(launch.user ? { uid: launch.user.uid, gid: launch.user.gid } : {}),
      });
    } finally {
      closeSync(log);
    }
    this.child.stdin?.on("error", () => {}); // a server that died at once: its exit says why
    const statusPipe = options.bootedPipe ? (this.child.stdio[SERVER_STATUS_FD] as NodeJS.ReadableStream | null) : null;
    let heard = "";
    let settle: (listening: boolean) => void = () => undefined;
    this.listening = new Promise((resolve) => (settle = resolve));
    this.booted = new Promise((resolve) => {
      if (!statusPipe) {
        settle(false);
        return resolve();
      }
      statusPipe.on("data", (chunk: Buffer) => {
        heard += chunk.toString("latin1");
        const lines = heard.split("\n");
        if (lines.includes(SERVER_STATUS.booted)) resolve();
        if (lines.includes(SERVER_STATUS.listening)) settle(true);
      });
      const ended = () => {
        resolve();
        settle(false);
      };
      statusPipe.on("end", ended);
      statusPipe.on("error", ended);
    });
    void this.booted.then(() => (this.#hasBooted = true));
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        this.#exit = signal ? { exitCode: 128 + (signalNumber(signal) ?? 0), signal } : { exitCode: code ?? 0 };
        this.#lastWords = this.logTail(LAST_WORDS_CHARS);
        rmSync(this.pidPath, { force: true });
        removeRunFile(this.#runFile);
        // Whatever the server left behind goes with it, as it would with a container.
        signalAll(processesTagged(this.runId), "SIGKILL");
        resolve(this.#exit);
      });
      this.child.once("error", (error) => {
        this.#exit = { exitCode: 127 };
        writeFileSync(this.logPath, `spawn failed: ${error.message}\n`, { flag: "a" });
        resolve(this.#exit);
      });
    });
    if (this.child.pid !== undefined) {
      writeFileSync(this.pidPath, `${this.child.pid}\n${this.runId}\n`);
      writeRunFile(this.#runFile, `${this.child.pid}\n${this.runId}\n`);
    }
  }

  /** The server's own pid: the launched program's, or the one `serverDepth` levels below it (bwrap's). */
  get serverPid(): number | undefined {
    let pid = this.child.pid;
    for (let depth = 0; pid !== undefined && depth < this.#serverDepth; depth++) pid = firstChildOf(pid);
    return pid;
  }

  get logPath(): string {
    return join(this.#dir, LOG_FILE);
  }

  get pidPath(): string {
    return join(this.#dir, PID_FILE);
  }

  get exit(): ExitInfo | undefined {
    return this.#exit;
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  /** Whether it runs and has said it booted (`booted` has resolved while it runs). */
  get hasBooted(): boolean {
    return this.#hasBooted && this.running;
  }

  /** SIGKILLs the server and every process of its run; resolves once the server is gone. */
  kill(): Promise<ExitInfo> {
    const pid = this.child.pid;
    if (this.running && pid !== undefined) signalAll([pid, ...descendantsOf(pid), ...processesTagged(this.runId)], "SIGKILL");
    return this.exited;
  }

  /** Whether the server says it listens within `timeoutMs` (false: it cannot say, it stopped, or time ran out). */
  async saysListening(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([this.listening, late, this.exited.then(() => false)]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Writes the server's one input and closes its stdin. */
  writeInput(text: string): void {
    this.child.stdin?.end(text);
  }

  /** Its folder, the files in it, moved as a whole to `dir` (a warm container's disk, mounted at its sandbox's folder now). */
  folderMoved(dir: string): void {
    this.#dir = dir;
  }

  /** Moves the log and pid files into `dir` (the server keeps writing to its open log). */
  moveTo(dir: string): void {
    renameSync(this.logPath, join(dir, LOG_FILE));
    const from = this.pidPath;
    this.#dir = dir;
    if (this.#exit === undefined && this.child.pid !== undefined) writeFileSync(this.pidPath, `${this.child.pid}\n${this.runId}\n`);
    rmSync(from, { force: true });
  }

  logTail(maxChars = 2000): string {
    try {
      return fileEnd(this.logPath, maxChars);
    } catch {
      return this.#lastWords.slice(-maxChars);
    }
  }
}

/** Writes a run's file, making its folder where missing (the last run's exit takes an empty one away). */
function writeRunFile(file: string, text: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, text);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || attempt === 3) throw error;
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    }
  }
}

/** Removes a run's file, and its folder once no run is left in it. */
function removeRunFile(file: string): void {
  rmSync(file, { force: true });
  try {
    rmdirSync(dirname(file));
  } catch {
    // other runs are listed there, or it is gone already
  }
}

/** The last `maxBytes` of a file (a log may be long; only its end is wanted). */
function fileEnd(path: string, maxBytes: number): string {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, maxBytes));
    const read = readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.subarray(0, read).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

function firstChildOf(pid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ")[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}
