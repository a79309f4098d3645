/**
 * The Worker's process under `npm start`: worker-dev.ts (wrangler's dev server, and the workerd it
 * runs) forked as the leader of its own process group, so that stopping it takes workerd and the
 * bundler with it and a replacement can bind the same port at once.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { WorkerDevAnswer, WorkerDevSettings } from "../worker-dev.ts";

export interface WorkerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcess {
  readonly pid: number;
  /** Settles when the process is gone. */
  readonly exited: Promise<WorkerExit>;
  /** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs: number): Promise<void>;
}

const WORKER_DEV = fileURLToPath(new URL("../worker-dev.ts", import.meta.url));

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  for (const target of [-child.pid!, child.pid!]) {
    try {
      process.kill(target, signal);
    } catch {
      // gone already
    }
  }
}

/** How long wrangler gets to bring the Worker up (a cold bundle on a busy machine takes tens of seconds). */
const READY_WITHIN_MS = 120_000;

/** Forks the Worker with `settings` and resolves once it says it is ready; rejects (with it stopped) if it does not. */
export async function startWorkerProcess(settings: WorkerDevSettings, cwd: string, env: NodeJS.ProcessEnv, readyWithinMs = READY_WITHIN_MS): Promise<WorkerProcess> {
  const child = fork(WORKER_DEV, [], { cwd, env, stdio: ["ignore", "inherit", "inherit", "ipc"], detached: true });
  const exited = new Promise<WorkerExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const worker: WorkerProcess = {
    pid: child.pid!,
    exited,
    async stop(graceMs) {
      if (child.exitCode === null && child.signalCode === null) {
        signalGroup(child, graceMs > 0 ? "SIGTERM" : "SIGKILL");
        const timer = setTimeout(() => signalGroup(child, "SIGKILL"), graceMs);
        await exited;
        clearTimeout(timer);
      }
      // Whatever of its group outlived it (a workerd whose parent was killed holds the port) goes too.
      signalGroup(child, "SIGKILL");
    },
  };
  child.send(settings);
  let timer: NodeJS.Timeout | undefined;
  const answer = await new Promise<WorkerDevAnswer>((resolve) => {
    child.once("message", (message: WorkerDevAnswer) => resolve(message));
    void exited.then(({ code, signal }) => resolve({ error: `it exited (${signal ?? `code ${code}`})` }));
    timer = setTimeout(() => resolve({ error: `it did not say it was ready within ${readyWithinMs / 1000} s` }), readyWithinMs);
  });
  clearTimeout(timer);
  if ("error" in answer) {
    await worker.stop(0);
    throw new Error(answer.error);
  }
  return worker;
}
