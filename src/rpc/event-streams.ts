/**
 * The event streams a caller of SandboxRpc reads (the client, and the Worker's Bridge API), the same
 * over Workers RPC and HTTP: an exec's events and a process's log events, each resumed where it broke off when a connection breaks (see
 * resumable-stream.ts). An AbortSignal or a `break` cancels the underlying stream (which, across
 * RPC, cancels it in the Durable Object and closes the container's connection).
 */
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import { isTerminalStatus } from "../../protocol/process.ts";
import { ResumeCursor, type ResumePoint } from "../../protocol/resume.ts";
import { ProcessNotFoundError } from "./errors.ts";
import type { ExecRequestOptions, HandleRef } from "./processes.ts";
import type { SandboxRpc } from "./sandbox-rpc.ts";
import { resumableEvents, type RetryPolicy } from "./resumable-stream.ts";

export interface StreamOptions {
  signal?: AbortSignal | undefined;
  retry?: RetryPolicy | undefined;
  /** Where the stream stands; moves as events arrive (pass one to read it while iterating). */
  cursor?: ResumeCursor | undefined;
}

/**
 * A command id made up on the caller's side. A streamed command is named up front so that its
 * stream can be resumed, and the command killed, even when the connection breaks (or an AbortSignal
 * fires) before its start event arrived. The same shape as the sandbox's own ids, with more randomness.
 */
export function newCommandId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `proc_${btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")}`;
}

const isExecEnd = (event: ExecEvent) => event.type === "complete" || event.type === "error";

/**
 * An exec's events. A command cannot be run again to resume it: after a break the events continue
 * from the container's record of the exec (kept a while after it ends), up to `complete` or `error`,
 * found by the id the caller gave it (so a stream that breaks before its start event resumes too).
 */
export async function* execEvents(
  rpc: SandboxRpc,
  command: string,
  wire: ExecRequestOptions & { processId: string },
  options: StreamOptions,
): AsyncGenerator<ExecEvent> {
  options.signal?.throwIfAborted();
  const first = await rpc.execStream(command, wire);
  yield* resumableEvents<ExecEvent>(first, {
    describe: `exec stream of "${command}"`,
    ...options,
    isFinal: isExecEnd,
    reopen: (point) => resumeExec(rpc, wire.processId, point, `"${command}"`),
  });
}

/** The events of an exec that is already running (or just finished), from a resume point. */
export async function* attachedExecEvents(rpc: SandboxRpc, processId: string, point: ResumePoint & HandleRef, options: StreamOptions): AsyncGenerator<ExecEvent> {
  options.signal?.throwIfAborted();
  const { generation, ...start } = point;
  const ref = generation === undefined ? {} : { generation };
  yield* resumableEvents<ExecEvent>(await resumeExec(rpc, processId, point, `exec "${processId}"`), {
    describe: `exec stream of "${processId}"`,
    ...options,
    cursor: options.cursor ?? new ResumeCursor(start),
    isFinal: isExecEnd,
    reopen: (next) => resumeExec(rpc, processId, { ...next, ...ref }, `exec "${processId}"`),
  });
}

async function resumeExec(rpc: SandboxRpc, processId: string, point: ResumePoint & HandleRef, what: string): Promise<ReadableStream<Uint8Array>> {
  try {
    return await rpc.resumeExecStream(processId, point);
  } catch (error) {
    // A finished exec's record is kept a minute (LIMITS.finishedExecRetentionMs); past that it is gone.
    if (!(error instanceof ProcessNotFoundError)) throw error;
    throw new ProcessNotFoundError(`${what} is not running, and no record of it is kept any more (or it never ran)`, {
      cause: error,
      context: { processId, ...point },
    });
  }
}

/** A process's log events after `since` (default: all that are retained), up to its final status. */
export async function* logEvents(
  rpc: SandboxRpc,
  processId: string,
  options: StreamOptions & { since?: number | undefined; ref?: HandleRef },
): AsyncGenerator<LogEvent> {
  options.signal?.throwIfAborted();
  const start: ResumePoint = options.since === undefined ? {} : { since: options.since };
  const open = (point: ResumePoint) => rpc.streamProcessLogs(processId, { ...options.ref, ...point });
  yield* resumableEvents<LogEvent>(await open(start), {
    describe: `log stream of process "${processId}"`,
    signal: options.signal,
    retry: options.retry,
    cursor: options.cursor ?? new ResumeCursor(start),
    isFinal: (event) => event.type === "status" && isTerminalStatus(event.status),
    reopen: open,
  });
}

