/**
 * EdgeProcessManager: Mastra's SandboxProcessManager over the sandbox's process table. Spawned
 * processes are background processes of the sandbox, so `list()` and `get(pid)` ask the service and
 * also see processes other clients started. Mastra's base class wraps these methods: it starts the
 * sandbox first, merges the sandbox's env overlay into each spawn, kills on `abortSignal`, and makes
 * `kill(pid)` wait for the end.
 */
import { SandboxProcessManager, type ProcessInfo, type SpawnProcessOptions } from "@mastra/core/workspace";
import { isTerminalStatus } from "../../../protocol/process.ts";
import { ProcessNotRunningError, type ProcessHandle as ClientProcess } from "../../client/index.ts";
import { invocationOf } from "./invocation.ts";
import { definedEnv } from "./options.ts";
import { EdgeProcessHandle, type HandleSource } from "./process-handle.ts";
import { followLog } from "./process-output.ts";
import type { ClientSandbox } from "./client-sandbox.ts";

export class EdgeProcessManager extends SandboxProcessManager<ClientSandbox> {
  override async spawn(command: string, options: SpawnProcessOptions = {}): Promise<EdgeProcessHandle> {
    // When Mastra quoted an argv into `command`, it passes the argv too: that runs without quoting.
    const invocation = invocationOf(options.originalInvocation?.command ?? command, options.originalInvocation?.args);
    const env = definedEnv(options.env);
    const cwd = options.cwd ?? this.sandbox.workingDirectory;
    const process = await this.sandbox.client.startProcess(invocation.command, {
      isolated: true,
      ...(invocation.args === undefined ? {} : { args: invocation.args }),
      ...(env === undefined ? {} : { env }),
      ...(cwd === undefined ? {} : { cwd }),
      ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    });
    const ignoreStdin = options.stdinMode === "ignore";
    // No stdin wanted: the process reads EOF at once instead of waiting for input that never comes.
    if (ignoreStdin) await process.closeStdin().catch(ignoreExited);
    const handle = new EdgeProcessHandle(sourceOf(process as ClientProcess, command, !ignoreStdin), options);
    this._tracked.set(handle.pid, handle);
    return handle;
  }

  override async list(): Promise<ProcessInfo[]> {
    const processes = await this.sandbox.client.listProcesses();
    return processes.map((process) => {
      const record = (process as ClientProcess).record;
      return {
        pid: record.id,
        command: commandLine(record),
        running: !isTerminalStatus(record.status),
        ...(record.exitCode === undefined ? {} : { exitCode: record.exitCode }),
      };
    });
  }

  /** A handle of this manager, or one for a process found in the sandbox (its output so far taken in). */
  override async get(pid: string): Promise<EdgeProcessHandle | undefined> {
    const tracked = this._tracked.get(pid);
    if (tracked) return tracked as EdgeProcessHandle;
    const process = await this.sandbox.client.getProcess(pid);
    if (process === null) return undefined;
    const record = (process as ClientProcess).record;
    const handle = new EdgeProcessHandle(sourceOf(process as ClientProcess, commandLine(record), true));
    this._tracked.set(pid, handle);
    await handle.caughtUp(record.lastSeq ?? 0);
    return handle;
  }

  /** Stops following every process (they keep running) and forgets the handles. */
  detachAll(): void {
    for (const handle of this._tracked.values()) (handle as EdgeProcessHandle).detach();
    this._tracked.clear();
  }
}

function sourceOf(process: ClientProcess, command: string, withStdin: boolean): HandleSource {
  return {
    pid: process.id,
    command,
    startedAt: process.startTime.getTime(),
    output: (signal) => followLog(process, signal),
    control: {
      kill: () => process.kill("SIGKILL"),
      ...(withStdin
        ? {
            stdin: {
              write: async (data: string) => void (await process.sendStdin(data)),
              close: async () => void (await process.closeStdin()),
            },
          }
        : {}),
    },
  };
}

function commandLine(record: { command: string; args?: string[] }): string {
  return record.args === undefined || record.args.length === 0 ? record.command : [record.command, ...record.args].join(" ");
}

function ignoreExited(error: unknown): void {
  if (!(error instanceof ProcessNotRunningError)) throw error;
}
