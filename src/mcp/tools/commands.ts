/**
 * `run_command`: a shell command to its end, its output sent on as MCP progress notifications while
 * it runs (when the client gave a progressToken), then the exit code and the output as the result.
 * It is our exec stream read with the resumable reader, so a broken stream to the Durable Object
 * loses nothing; the text kept for the result is capped, the notifications are not. Commands run in
 * the sandbox's default session, as a shell an agent types into would: `cd` and `export` carry over.
 */
import { z } from "zod";
import { timedOutResult, type ExecEvent } from "../../../protocol/events.ts";
import { execRequestSchema } from "../../../protocol/process.ts";
import { errorFromCode, SandboxError } from "../../rpc/errors.ts";
import { execEvents, newCommandId } from "../../rpc/event-streams.ts";
import { defineTool, jsonResult } from "../tool.ts";

/** Characters of each stream the result keeps (its tail goes): a model's context is the scarce thing. */
export const RESULT_OUTPUT_CHARS = 256 * 1024;

const input = z.strictObject({
  command: execRequestSchema.shape.command.describe("A shell command line, run by bash -c"),
  cwd: execRequestSchema.shape.cwd.describe("Working directory (default /workspace)"),
  env: execRequestSchema.shape.env.describe("Variables on top of the sandbox's"),
  timeout: execRequestSchema.shape.timeout.describe("Time limit in milliseconds: then the command is killed (exit code 124)"),
  sessionId: execRequestSchema.shape.sessionId.describe("Run in this session instead of the default one (each session keeps its own cwd, exported variables, functions, aliases and shell options)"),
  isolated: execRequestSchema.shape.isolated.describe("Run in a fresh shell that inherits and leaves nothing (default: the default session)"),
});

/** One stream's text for the result, capped at the front of what came. */
class CappedText {
  text = "";
  truncated = false;
  add(chunk: string): void {
    const room = RESULT_OUTPUT_CHARS - this.text.length;
    if (chunk.length > room) this.truncated = true;
    this.text += chunk.slice(0, Math.max(room, 0));
  }
}

export const runCommand = defineTool({
  name: "run_command",
  title: "Run a command",
  description:
    "Runs a shell command in the sandbox and waits for it to end. Output streams as progress notifications while it runs; " +
    "the result has the exit code, stdout and stderr. For servers and other long-lived programs use start_process.",
  input,
  annotations: { destructiveHint: true, openWorldHint: true },
  async run({ command, ...options }, call) {
    const stdout = new CappedText();
    const stderr = new CappedText();
    let streamed = 0;
    const events = execEvents(call.sandbox, command, { ...options, processId: newCommandId() }, { signal: call.signal });
    let end: ExecEvent | undefined;
    for await (const event of events) {
      if (event.type === "stdout" || event.type === "stderr") {
        (event.type === "stdout" ? stdout : stderr).add(event.data);
        streamed += event.data.length;
        await call.progress(streamed, event.data);
      } else if (event.type === "complete" || event.type === "error") {
        end = event;
        break;
      }
    }
    // A command past its time limit answers as one that exited 124, timed out: the tool's result, not its failure.
    const result = end === undefined ? undefined : end.type === "complete" ? end.result : timedOutResult(end);
    if (end?.type === "error" && result === undefined) throw errorFromCode(end.code ?? "SPAWN_FAILED", end.error);
    if (result === undefined) throw new SandboxError(`The output of "${command}" ended before the command did`, "INTERNAL_ERROR");
    const { exitCode, timedOut, duration } = result;
    // A command that exits non-zero ran as asked: that is its answer, not a failure of the tool.
    return jsonResult({
      exitCode,
      stdout: stdout.text,
      stderr: stderr.text,
      ...(timedOut ? { timedOut } : {}),
      ...(stdout.truncated || stderr.truncated ? { truncated: true } : {}),
      duration,
    });
  },
});
