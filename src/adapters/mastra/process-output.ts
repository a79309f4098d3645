/**
 * What feeds a process handle: its output as it arrives and then how it ended, read from the
 * service. A background process is followed through its log stream; a command run by
 * `executeCommand` through its exec stream, falling back to the same log when that stream breaks.
 * Both resume after the last event seen, so nothing arrives twice. A process that disappeared with
 * its container (destroy(), a crash) ends as killed by SIGKILL, which is what happened to it.
 */
import { timedOutResult } from "../../../protocol/events.ts";
import { isTerminalStatus } from "../../../protocol/process.ts";
import {
  ContainerUnavailableError,
  ProcessNotFoundError,
  SandboxError,
  StaleProcessHandleError,
  errorFromCode,
  type ExecStreamOptions,
  type ProcessHandle as ClientProcess,
  type SandboxClient,
} from "../../client/index.ts";
import { outputText } from "../../rpc/bytes.ts";
import type { Invocation } from "./invocation.ts";

export interface ExitFacts {
  exitCode: number;
  timedOut: boolean;
  killed: boolean;
}

export type ProcessOutput =
  | { type: "stdout" | "stderr"; data: string; seq?: number }
  | { type: "exit"; exit: ExitFacts; seq?: number };

/** 128 + SIGKILL: how a process that went down with its container ended. */
const LOST: ExitFacts = { exitCode: 137, timedOut: false, killed: true };
/** Reattaches in a row that bring nothing new before following is given up. */
const MAX_IDLE_REATTACHES = 5;
const REATTACH_DELAY_MS = 200;

/** The process no longer exists where it ran: its container stopped or was replaced, or its record is gone. */
export function isGone(error: unknown): boolean {
  return error instanceof StaleProcessHandleError || error instanceof ProcessNotFoundError || error instanceof ContainerUnavailableError;
}

/** Follows a background process's log from after `since` until it exits; aborting stops following. */
export async function* followLog(process: ClientProcess, signal: AbortSignal, since?: number): AsyncGenerator<ProcessOutput> {
  let last = since;
  for (let idle = 0; ; ) {
    let progressed = false;
    try {
      for await (const event of process.streamLogs({ signal, ...(last === undefined ? {} : { since: last }) })) {
        if (event.seq !== undefined) last = event.seq;
        progressed = true;
        if (event.type === "stdout" || event.type === "stderr") {
          yield { type: event.type, data: outputText(event), ...seqOf(event) };
        } else if (event.type === "status" && isTerminalStatus(event.status)) {
          const killed = event.status === "killed";
          const exitCode = event.exitCode ?? (killed ? LOST.exitCode : 1);
          yield { type: "exit", exit: { exitCode, timedOut: event.timedOut === true, killed }, ...seqOf(event) };
          return;
        } else if (event.type === "error") {
          throw errorFromCode(event.code ?? "INTERNAL_ERROR", event.error);
        }
      }
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (isGone(error)) {
        yield { type: "exit", exit: LOST };
        return;
      }
      throw error;
    }
    if (signal.aborted) throw signal.reason;
    // The stream ended before the exit (a dropped connection): pick it up again after the last event.
    idle = progressed ? 0 : idle + 1;
    if (idle > MAX_IDLE_REATTACHES) {
      throw new SandboxError(`Lost the output stream of process "${process.id}" and could not pick it up again`, "CONNECTION_FAILED");
    }
    await new Promise((resolve) => setTimeout(resolve, REATTACH_DELAY_MS * idle));
  }
}

/**
 * Runs a command as an exec of the given id and follows it to the end (`onStart` once it runs). Its
 * stdin is /dev/null and it leaves no entry in the process list afterwards, like a foreground command.
 */
export async function* followExec(
  client: SandboxClient,
  processId: string,
  invocation: Invocation,
  options: Omit<ExecStreamOptions, "processId" | "args" | "signal" | "killOnDisconnect">,
  signal: AbortSignal,
  onStart: () => void,
): AsyncGenerator<ProcessOutput> {
  let last: number | undefined;
  // Mastra runs each command in a fresh process (as its LocalSandbox does): nothing carries between them.
  const wire: ExecStreamOptions = { ...options, processId, isolated: true, ...(invocation.args === undefined ? {} : { args: invocation.args }) };
  for await (const event of client.execStream(invocation.command, wire)) {
    if (event.seq !== undefined) last = event.seq;
    if (event.type === "start") {
      onStart();
    } else if (event.type === "stdout" || event.type === "stderr") {
      yield { type: event.type, data: outputText(event), ...seqOf(event) };
    } else if (event.type === "complete") {
      const { result } = event;
      yield { type: "exit", exit: { exitCode: event.exitCode, timedOut: result.timedOut === true, killed: result.killed === true }, ...seqOf(event) };
      return;
    } else if (event.type === "error") {
      // Mastra's commands end at their timeout as an exit (124, timed out, killed), not an error.
      const timedOut = timedOutResult(event);
      if (!timedOut) throw errorFromCode(event.code ?? "INTERNAL_ERROR", event.error);
      yield { type: "exit", exit: { exitCode: timedOut.exitCode, timedOut: true, killed: timedOut.killed === true }, ...seqOf(event) };
      return;
    }
  }
  // The exec stream broke for good; its output goes on in the process log of the same id.
  const process = await client.getProcess(processId);
  if (process === null) {
    yield { type: "exit", exit: LOST };
    return;
  }
  yield* followLog(process as ClientProcess, signal, last);
}

function seqOf(event: { seq?: number }): { seq?: number } {
  return event.seq === undefined ? {} : { seq: event.seq };
}
