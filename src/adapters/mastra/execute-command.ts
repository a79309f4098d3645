/**
 * `executeCommand` of an EdgeSandbox: one exec in the sandbox, streamed, so `onStdout`/`onStderr`
 * see output as it arrives. It follows LocalSandbox: the sandbox's env overlay under the call's env,
 * the sandbox's working directory and default timeout unless the call says otherwise, all output
 * retained unless `maxRetainedBytes` says otherwise, and `abortSignal` kills the command, which then
 * resolves as killed.
 */
import type { CommandResult, ExecuteCommandOptions } from "@mastra/core/workspace";
import { displayCommand, invocationOf } from "./invocation.ts";
import { definedEnv } from "./options.ts";
import { EdgeProcessHandle } from "./process-handle.ts";
import { followExec } from "./process-output.ts";
import type { ClientSandbox } from "./client-sandbox.ts";

export async function executeCommand(
  sandbox: ClientSandbox,
  command: string,
  args: string[] = [],
  options: ExecuteCommandOptions = {},
  defaultTimeout?: number,
): Promise<CommandResult> {
  await sandbox.ensureRunning();
  const invocation = invocationOf(command, args);
  const env = definedEnv({ ...sandbox.getEnv(), ...options.env });
  const cwd = options.cwd ?? sandbox.workingDirectory;
  const timeout = options.timeout ?? defaultTimeout;
  const shown = displayCommand(command, args);
  // Our own id, so the command can be killed by it from the moment it runs.
  const pid = `exec-${crypto.randomUUID()}`;
  let markStarted = () => {};
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const handle = new EdgeProcessHandle(
    {
      pid,
      command: shown,
      startedAt: Date.now(),
      output: (signal) => {
        const exec = { ...(env === undefined ? {} : { env }), ...(cwd === undefined ? {} : { cwd }), ...(timeout === undefined ? {} : { timeout }) };
        return followExec(sandbox.client, pid, invocation, exec, signal, markStarted);
      },
      control: {
        kill: async () => {
          await started;
          await sandbox.client.killProcess(pid, "SIGKILL");
        },
      },
    },
    {
      maxRetainedBytes: options.maxRetainedBytes ?? Number.POSITIVE_INFINITY,
      ...(options.onStdout === undefined ? {} : { onStdout: options.onStdout }),
      ...(options.onStderr === undefined ? {} : { onStderr: options.onStderr }),
      ...(timeout === undefined ? {} : { timeout }),
    },
  );
  // A command that fails before it runs must not leave a kill waiting for its start.
  void handle.wait().finally(markStarted).catch(() => undefined);
  const abortSignal = options.abortSignal;
  const onAbort = () => void handle.kill().catch(() => undefined);
  if (abortSignal?.aborted) onAbort();
  else abortSignal?.addEventListener("abort", onAbort, { once: true });
  try {
    const result = await handle.wait();
    return { ...result, command: shown, ...(args.length > 0 ? { args: [...args] } : {}) };
  } finally {
    abortSignal?.removeEventListener("abort", onAbort);
  }
}
