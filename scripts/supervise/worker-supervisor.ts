/**
 * Keeps `npm start`'s Worker answering. wrangler restarts a workerd that crashed, but its dev proxy
 * can then hold every request for good, and says nothing. So: each second, the workerd processes
 * under the Worker's process are counted; when one is gone (or the Worker's process itself), the
 * Worker gets a few seconds to answer again by itself, else its whole process is replaced on the
 * same port. What happened and what recovered is said in one health line. When the Worker cannot be
 * brought back (its replacement does not answer, or it keeps dying), `giveUp` is called.
 */
import { readFileSync } from "node:fs";
import { descendantsOf } from "../../runtime/process-tree.ts";
import { answersWithin } from "./answers.ts";
import type { WorkerProcess } from "./worker-process.ts";

export interface WorkerSupervisorOptions {
  /** What to probe: any answer means the Worker serves. */
  healthUrl: string;
  /** Starts a replacement Worker process (resolves once it says it is ready). */
  start(): Promise<WorkerProcess>;
  say(line: string): void;
  giveUp(reason: string): void;
  /** How long a Worker whose workerd crashed gets to answer by itself (default 5 s). */
  selfRecoveryMs?: number;
  /** How long a replacement gets to answer (default 60 s). */
  replacementMs?: number;
  /** Replacements allowed within `restartWindowMs` before giving up (default 3 in 5 min). */
  maxRestarts?: number;
  restartWindowMs?: number;
}

function workerdPids(root: number): number[] {
  return descendantsOf(root).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd";
    } catch {
      return false;
    }
  });
}

/** Whether `pid` has exited (a zombie not yet collected has too). */
function hasExited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

export class WorkerSupervisor {
  #current: WorkerProcess;
  #workerd: number[];
  #recovering = false;
  #stopped = false;
  #restarts: number[] = [];
  readonly #timer: NodeJS.Timeout;
  readonly #options: Required<WorkerSupervisorOptions>;

  constructor(first: WorkerProcess, options: WorkerSupervisorOptions) {
    this.#options = { selfRecoveryMs: 5_000, replacementMs: 60_000, maxRestarts: 3, restartWindowMs: 5 * 60_000, ...options };
    this.#current = first;
    this.#workerd = workerdPids(first.pid);
    this.#watchExit(first);
    this.#timer = setInterval(() => this.#check(), 1_000);
  }

  get current(): WorkerProcess {
    return this.#current;
  }

  /** Stops watching, then stops the Worker. */
  async stop(graceMs: number): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#current.stop(graceMs);
  }

  #watchExit(worker: WorkerProcess): void {
    void worker.exited.then(({ code, signal }) => {
      if (this.#stopped || this.#recovering || worker !== this.#current) return;
      void this.#recover(`the Worker's process exited (${signal ?? `code ${code}`})`, false);
    });
  }

  #check(): void {
    if (this.#stopped || this.#recovering) return;
    // The Worker's own process is gone (its workerd went with it, or no longer counts as under it):
    // its exit, on its way, says so (#watchExit), rather than a workerd's death as the cause.
    if (hasExited(this.#current.pid)) return;
    const now = workerdPids(this.#current.pid);
    const gone = this.#workerd.filter((pid) => !now.includes(pid));
    this.#workerd = now;
    if (gone.length > 0) void this.#recover(`workerd (pid ${gone.join(", ")}) died`, true);
  }

  async #recover(what: string, mayRecoverAlone: boolean): Promise<void> {
    this.#recovering = true;
    const since = Date.now();
    const { healthUrl } = this.#options;
    try {
      if (mayRecoverAlone && (await answersWithin(healthUrl, this.#options.selfRecoveryMs))) {
        if (!this.#stopped) this.#options.say(`  health: ${what}; wrangler restarted it and the Worker answers again (${seconds(since)})`);
        return;
      }
      if (this.#stopped) return;
      const now = Date.now();
      this.#restarts = [...this.#restarts.filter((at) => now - at < this.#options.restartWindowMs), now];
      if (this.#restarts.length > this.#options.maxRestarts) {
        this.#options.giveUp(`${what}, the ${this.#options.maxRestarts + 1}th time in ${this.#options.restartWindowMs / 60_000} min`);
        return;
      }
      this.#options.say(`  health: ${what}${mayRecoverAlone ? " and the Worker stopped answering" : ""}; restarting the Worker`);
      await this.#current.stop(0);
      if (this.#stopped) return;
      const replacement = await this.#options.start();
      this.#current = replacement;
      this.#watchExit(replacement);
      if (this.#stopped) return void (await replacement.stop(0));
      if (!(await answersWithin(healthUrl, this.#options.replacementMs))) {
        this.#options.giveUp(`${what}, and the restarted Worker does not answer on ${healthUrl}`);
        return;
      }
      this.#workerd = workerdPids(replacement.pid);
      this.#options.say(`  health: the Worker recovered: restarted, it answers again on ${healthUrl} (${seconds(since)} after ${what})`);
    } catch (error) {
      if (!this.#stopped) this.#options.giveUp(`${what}, and the Worker could not be restarted: ${(error as Error).message}`);
    } finally {
      this.#recovering = false;
      // Counted afresh: what died meanwhile was part of this recovery.
      if (!this.#stopped) this.#workerd = workerdPids(this.#current.pid);
    }
  }
}
