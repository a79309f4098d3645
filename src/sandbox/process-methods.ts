/**
 * The Durable Object's command and process methods (their calls to the container: processes.ts).
 * Each names what it is about, so that the shell checks it first: a run's idempotency key, or a
 * process handle's generation. A process of an earlier container is answered from what was kept of
 * it (process-ledger.ts) instead of the running container.
 */
import { ProcessNotFoundError } from "../rpc/errors.ts";
import type { HandleRef } from "../rpc/processes.ts";
import { assertSameGeneration } from "./generation.ts";
import { keptLogs, keptLogStream, keptRecord, type LedgerEntry } from "./process-ledger.ts";
import * as processes from "./processes.ts";
import type { FamilyMethods, Link, SandboxShell } from "./shell.ts";

export const processMethods = {
  exec: (shell, command, options = {}) => shell.call(({ api }) => processes.exec(api, command, options), { key: options.idempotencyKey }),

  execStream: (shell, command, options = {}) =>
    shell.call(async (link) => shell.guardEvents(await processes.execStream(link.api, command, options), link), { key: options.idempotencyKey }),

  /** A broken execStream picks up here, from its last event id. */
  resumeExecStream: (shell, id, options = {}) =>
    shell.call(async (link) => shell.guardEvents(await processes.resumeExecStream(link.api, id, options), link), { ref: options, processId: id }),

  startProcess: (shell, command, options = {}) =>
    shell.call(({ api, generation }) => processes.startProcess(api, generation, command, options), { key: options.idempotencyKey }),

  listProcesses: (shell, options = {}) => shell.call(({ api, generation }) => processes.listProcesses(api, generation, options)),

  /** The running container's process, or (after it slept or died) what was kept of it. */
  getProcess: (shell, id, ref) =>
    liveOrKept(
      shell,
      id,
      ref,
      async ({ api, generation }) => {
        const found = await processes.getProcess(api, generation, id);
        if (!found) throw new ProcessNotFoundError(`process ${id} not found`);
        return found;
      },
      keptRecord,
      () => null,
    ),

  killProcess: (shell, id, signal, ref) => shell.call(({ api }) => processes.killProcess(api, id, signal), { ref, processId: id }),

  killAllProcesses: (shell, options = {}) => shell.call(({ api }) => processes.killAllProcesses(api, options)),

  streamProcessLogs: (shell, id, options = {}) =>
    liveOrKept(shell, id, options, async (link) => shell.guardEvents(await processes.streamProcessLogs(link.api, id, options), link), (entry) => keptLogStream(entry, options)),

  getProcessLogs: (shell, id, ref) => liveOrKept(shell, id, ref, ({ api }) => processes.getProcessLogs(api, id), keptLogs),

  cleanupCompletedProcesses: (shell) => shell.call(({ api }) => processes.cleanupCompletedProcesses(api)),

  writeStdin: (shell, id, data, options = {}) => shell.call(({ api }) => processes.writeStdin(api, id, data, options), { ref: options, processId: id }),

  closeStdin: (shell, id, ref) => shell.call(({ api }) => processes.closeStdin(api, id), { ref, processId: id }),
} satisfies FamilyMethods;

/**
 * A call about one process: answered by the running container, or from what was kept of an
 * earlier container's process — the one a handle's generation names, or the kept one of that id
 * when the running container does not know it. `missing` answers when neither knows it (default: PROCESS_NOT_FOUND).
 */
function liveOrKept<T>(
  shell: SandboxShell,
  id: string,
  ref: HandleRef | undefined,
  live: (link: Link) => Promise<T>,
  kept: (entry: LedgerEntry) => T,
  missing?: () => T,
): Promise<T> {
  return shell.guard(async () => {
    const link = await shell.link();
    const current = link.generation.instanceId;
    if (ref?.generation !== undefined && ref.generation !== current) {
      const entry = await shell.ledger.find(id, current, ref.generation);
      if (entry) return kept(entry);
      assertSameGeneration(ref, link.generation, id);
    }
    try {
      return await live(link);
    } catch (error) {
      if (!(error instanceof ProcessNotFoundError)) throw error;
      const entry = await shell.ledger.find(id, current);
      if (entry) return kept(entry);
      if (missing) return missing();
      throw error;
    }
  });
}
