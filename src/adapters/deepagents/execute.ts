/**
 * `execute` of the deepagents backend: one exec in the sandbox, streamed, with stdout and stderr
 * joined in the order they arrived (what an agent reads as the command's output), capped at a
 * byte budget past which `truncated` is set while the command still runs to its exit code.
 */
import { SandboxError } from "deepagents";
import type { ExecuteResponse } from "deepagents";
import { errorFromCode, type SandboxClient } from "../../client/index.ts";
import { outputText } from "../../rpc/bytes.ts";
import { timedOutResult } from "../../../protocol/events.ts";

export interface ExecuteLimits {
  /** Milliseconds; undefined: no limit. */
  timeoutMs: number | undefined;
  maxOutputBytes: number;
}

export async function executeInSandbox(client: SandboxClient, command: string, limits: ExecuteLimits): Promise<ExecuteResponse> {
  const encoder = new TextEncoder();
  const parts: string[] = [];
  let bytes = 0;
  let truncated = false;
  try {
    // Each deepagents `execute` is its own shell: isolated, so no command inherits another's cd or exports.
    for await (const event of client.execStream(command, { isolated: true, ...(limits.timeoutMs === undefined ? {} : { timeout: limits.timeoutMs }) })) {
      if (event.type === "stdout" || event.type === "stderr") {
        if (truncated) continue;
        const text = outputText(event);
        const size = encoder.encode(text).byteLength;
        if (bytes + size <= limits.maxOutputBytes) {
          parts.push(text);
          bytes += size;
        } else {
          parts.push(fitBytes(text, limits.maxOutputBytes - bytes));
          truncated = true;
        }
      } else if (event.type === "truncated") {
        truncated = true;
      } else if (event.type === "complete") {
        return { output: parts.join(""), exitCode: event.exitCode, truncated };
      } else if (event.type === "error") {
        // deepagents' own shells answer a timeout as exit code 124 with a note, not as an error.
        const timedOut = timedOutResult(event);
        if (!timedOut) throw errorFromCode(event.code ?? "INTERNAL_ERROR", event.error);
        const output = parts.join("");
        return { output: `${output}${output === "" || output.endsWith("\n") ? "" : "\n"}Error: ${event.error}`, exitCode: timedOut.exitCode, truncated };
      }
    }
  } catch (error) {
    throw new SandboxError(`Command execution failed: ${error instanceof Error ? error.message : String(error)}`, "COMMAND_FAILED", asError(error));
  }
  throw new SandboxError(`Command execution failed: the output of "${command}" ended before its exit code`, "COMMAND_FAILED");
}

/** The longest prefix of `text` within `budget` UTF-8 bytes, never splitting a character. */
function fitBytes(text: string, budget: number): string {
  const encoder = new TextEncoder();
  let end = Math.min(text.length, budget);
  while (end > 0 && encoder.encode(text.slice(0, end)).byteLength > budget) end--;
  // Do not leave half of a surrogate pair.
  if (end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}

function asError(error: unknown): Error | undefined {
  return error instanceof Error ? error : undefined;
}
