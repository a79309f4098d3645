/**
 * Runs one extraction in a worker thread of its own (extract-worker.ts) and feeds it the body, so
 * the server's event loop only moves bytes: an archive that takes long, or that is built to make a
 * parser spin, delays no other call of the sandbox. The worker is bounded three ways:
 *   - a deadline for the whole extraction and one for each chunk it is handed (a stuck worker, or a
 *     body dripped in for hours): past either it is terminated, EXTRACTION_TIMEOUT;
 *   - a heap of its own (ARCHIVE_LIMITS.extractHeapMiB): past it, PAYLOAD_TOO_LARGE;
 *   - a few chunks in flight at most, so a fast sender never queues the body in memory.
 * A thread rather than a child process: it starts about as fast (two to four tenths of a second on a
 * loaded machine, node-tar included), shares the server's descriptors (the staging folder is handed
 * over by its /proc/self/fd path) and costs no process of the sandbox's limit; terminate() stops it
 * even in a loop that never yields. Since starting one is most of a small archive's time, a thread
 * whose extraction ended well (the whole body read) waits for the next one for IDLE_MS, then goes.
 */
import type { Worker } from "node:worker_threads";
import { ARCHIVE_LIMITS } from "../../protocol/archive.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { FromWorker, ToWorker } from "./extract-messages.ts";
import type { ExtractLimits, UnpackResult } from "./extract-tree.ts";

/**
 * node:worker_threads, loaded when the first thread starts: a process started from a startup snapshot
 * that holds that module (boot/snapshot.ts) cannot start a working thread (Node aborts as the thread
 * sets up), so the module is left out of the snapshot.
 */
const workerThreads = () => process.getBuiltinModule("node:worker_threads");

/** Chunks handed to the worker and not yet handled, at most. */
const IN_FLIGHT = 4;
/** How long a thread that finished an extraction waits for the next before it ends. */
const IDLE_MS = 30_000;

/** The one thread waiting for an extraction, if any. */
let idle: { worker: Worker; timer: ReturnType<typeof setTimeout> } | undefined;

function takeWorker(): Worker {
  if (idle) {
    const { worker, timer } = idle;
    idle = undefined;
    clearTimeout(timer);
    worker.ref();
    return worker;
  }
  const worker = new (workerThreads().Worker)(workerUrl(), { resourceLimits: { maxOldGenerationSizeMb: ARCHIVE_LIMITS.extractHeapMiB }, stdout: false, stderr: false });
  worker.once("exit", () => {
    if (idle?.worker !== worker) return;
    clearTimeout(idle.timer);
    idle = undefined;
  });
  return worker;
}

/** Keeps a thread for the next extraction (one at most; it does not hold the server up). */
function keepWorker(worker: Worker): void {
  if (idle) {
    void worker.terminate();
    return;
  }
  worker.unref();
  const timer = setTimeout(() => {
    if (idle?.worker === worker) idle = undefined;
    void worker.terminate();
  }, IDLE_MS);
  timer.unref();
  idle = { worker, timer };
}

/** The worker's entry: beside this file in the sources, beside the bundle's chunks once bundled (boot/bundle.ts). */
export const EXTRACT_WORKER_ENTRY = "extract-worker";
/** Found when a worker starts: in the image's startup snapshot, where the bundle lies is known only then. */
const workerUrl = () => new URL(`./${EXTRACT_WORKER_ENTRY}${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url);

export interface Deadlines {
  /** The whole extraction. */
  totalMs: number;
  /** One chunk, from being handed over to being handled. */
  stallMs: number;
}

const DEFAULT_DEADLINES: Deadlines = { totalMs: ARCHIVE_LIMITS.extractDeadlineMs, stallMs: ARCHIVE_LIMITS.extractStallMs };

export async function extractOffLoop(
  workspace: string,
  body: AsyncIterable<Buffer>,
  limits: ExtractLimits,
  deadlines: Deadlines = DEFAULT_DEADLINES,
): Promise<UnpackResult> {
  const worker = takeWorker();
  const send = (message: ToWorker, transfer: ArrayBuffer[] = []) => worker.postMessage(message, transfer);
  let settle!: { resolve: (result: UnpackResult) => void; reject: (error: unknown) => void };
  const outcome = new Promise<UnpackResult>((resolve, reject) => (settle = { resolve, reject }));
  let finished = false;
  const finish = (error: unknown, result?: UnpackResult, reusable = false) => {
    if (finished) return;
    finished = true;
    clearTimeout(total);
    clearTimeout(stall);
    wakeSender();
    worker.off("message", onMessage);
    worker.off("error", onError);
    worker.off("exit", onExit);
    if (reusable) keepWorker(worker);
    else void worker.terminate();
    if (error === undefined) settle.resolve(result!);
    else settle.reject(error);
  };
  const timedOut = (what: string, ms: number) =>
    new ServiceError("EXTRACTION_TIMEOUT", `the extraction was stopped: ${what} took longer than ${ms} ms; nothing was kept`, { timeoutMs: ms });
  const total = setTimeout(() => finish(timedOut("the whole archive", deadlines.totalMs)), deadlines.totalMs);
  let stall: ReturnType<typeof setTimeout> | undefined;
  const armStall = () => {
    clearTimeout(stall);
    stall = inFlight > 0 ? setTimeout(() => finish(timedOut("one received chunk", deadlines.stallMs)), deadlines.stallMs) : undefined;
  };

  let inFlight = 0;
  let wake: (() => void) | undefined;
  const wakeSender = () => {
    wake?.();
    wake = undefined;
  };
  const onMessage = (message: FromWorker) => {
    if ("took" in message) {
      inFlight--;
      armStall();
      wakeSender();
    } else if ("done" in message) finish(undefined, message.done, message.reusable);
    else if ("refused" in message) finish(new ServiceError(message.refused.code, message.refused.message, message.refused.context));
    else finish(Object.assign(new Error(message.failed.message), message.failed.errno === undefined ? {} : { code: message.failed.errno }));
  };
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code === "ERR_WORKER_OUT_OF_MEMORY") {
      finish(new ServiceError("PAYLOAD_TOO_LARGE", `the archive needs more than ${ARCHIVE_LIMITS.extractHeapMiB} MiB to extract`, { maxHeapMiB: ARCHIVE_LIMITS.extractHeapMiB }));
    } else finish(error);
  };
  const onExit = () => finish(new ServiceError("INVALID_ARCHIVE", "the extraction ended without an answer"));
  worker.on("message", onMessage);
  worker.on("error", onError);
  worker.on("exit", onExit);
  send({ start: { workspace, limits } });

  const pump = async () => {
    for await (const chunk of body) {
      if (finished) return;
      // A copy the worker owns: the body's buffers may be slices of a shared pool.
      const owned = new Uint8Array(chunk);
      inFlight++;
      send({ chunk: owned }, [owned.buffer]);
      if (inFlight === 1) armStall();
      while (inFlight >= IN_FLIGHT && !finished) await new Promise<void>((resolve) => (wake = resolve));
      if (finished) return;
    }
    if (!finished) send({ end: true });
  };
  // A body that fails (the caller went away) ends the extraction; the worker's own answer wins a tie.
  pump().catch((error: unknown) => finish(error));
  return outcome;
}
