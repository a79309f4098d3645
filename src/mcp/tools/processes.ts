/**
 * Background processes as tools: start one (a server, a watcher), list them, read a process's
 * retained output, and signal it. Their ids are the sandbox's own, shared with /v1 and the client.
 */
import { z } from "zod";
import { execRequestSchema, killQuerySchema, type ProcessInfo } from "../../../protocol/process.ts";
import { errorFromCode } from "../../rpc/errors.ts";
import { defineTool, jsonResult } from "../tool.ts";

const processId = execRequestSchema.shape.processId.unwrap();

/** What a model needs of a process record. */
function processSummary(record: ProcessInfo): Record<string, unknown> {
  const { id, pid, command, status, exitCode, startTime } = record;
  return { id, pid, command, status, ...(exitCode === undefined || exitCode === null ? {} : { exitCode }), startTime };
}

export const startProcess = defineTool({
  name: "start_process",
  title: "Start a background process",
  description: "Starts a long-running command (a server, a build in watch mode) in the background and returns at once with its id. Read its output with read_process_logs, stop it with kill_process.",
  input: z.strictObject({
    command: execRequestSchema.shape.command.describe("A shell command line, run by bash -c"),
    processId: processId.optional().describe("An id to give the process (default: one is made up)"),
    cwd: execRequestSchema.shape.cwd.describe("Working directory (default /workspace)"),
    env: execRequestSchema.shape.env.describe("Variables on top of the sandbox's"),
  }),
  annotations: { destructiveHint: true, openWorldHint: true },
  async run({ command, ...options }, call) {
    return jsonResult({ process: processSummary(await call.sandbox.startProcess(command, options)) });
  },
});

export const listProcesses = defineTool({
  name: "list_processes",
  title: "List processes",
  description: "Lists the sandbox's background processes and recent commands with their status and exit codes.",
  input: z.strictObject({}),
  annotations: { readOnlyHint: true },
  async run(_args, call) {
    return jsonResult({ processes: (await call.sandbox.listProcesses()).map(processSummary) });
  },
});

export const readProcessLogs = defineTool({
  name: "read_process_logs",
  title: "Read a process's output",
  description: "The output a process has written so far (stdout and stderr, the most recent 8 MiB of each), and its status.",
  input: z.strictObject({ processId: processId.describe("The process's id") }),
  annotations: { readOnlyHint: true },
  async run(args, call) {
    const [logs, record] = await Promise.all([call.sandbox.getProcessLogs(args.processId), call.sandbox.getProcess(args.processId)]);
    if (record === null) throw errorFromCode("PROCESS_NOT_FOUND", `No process "${args.processId}"`);
    const dropped = (logs.stdoutDropped ?? 0) + (logs.stderrDropped ?? 0);
    return jsonResult({ process: processSummary(record), stdout: logs.stdout, stderr: logs.stderr, ...(dropped > 0 ? { droppedBytes: dropped } : {}) });
  },
});

export const killProcess = defineTool({
  name: "kill_process",
  title: "Kill a process",
  description: "Signals a process and its whole process group (SIGTERM by default, then SIGKILL after a grace period).",
  input: z.strictObject({
    processId: processId.describe("The process's id"),
    signal: killQuerySchema.shape.signal,
  }),
  annotations: { destructiveHint: true },
  async run({ processId, signal }, call) {
    return jsonResult({ ...(await call.sandbox.killProcess(processId, signal)) });
  },
});
