/**
 * The event streams a caller reads, the same over Workers RPC and HTTP: an exec's events and a
 * process's log events, each resumed from its last event id when a connection breaks (see
 * resumable-stream.ts). An AbortSignal or a `break` cancels the underlying stream (which, across
 * RPC, cancels it in the Durable Object and closes the container's connection).
 */
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import { isTerminalStatus } from "../../protocol/process.ts";
import { ProcessNotFoundError, SandboxConnectionError } from "../rpc/errors.ts";
import type { ExecRequestOptions, HandleRef } from "../rpc/processes.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import { base64ToText } from "./bytes.ts";
import { resumableEvents, type RetryPolicy } from "./resumable-stream.ts";

export interface StreamOptions {
  signal?: AbortSignal | undefined;
  retry?: RetryPolicy | undefined;
}

/**
 * An exec's events. A command cannot be run again to resume it: after a break the events continue
 * from the container's record of the exec (kept a while after it ends), up to `complete` or `error`.
 */
export async function* execEvents(rpc: SandboxRpc, command: string, wire: ExecRequestOptions, options: StreamOptions): AsyncGenerator<ExecEvent> {
  options.signal?.throwIfAborted();
  const first = await rpc.execStream(command, wire);
  let processId = wire.processId;
  const events = resumableEvents<ExecEvent>(first, {
    describe: `exec stream of "${command}"`,
    ...options,
    isFinal: (event) => event.type === "complete" || event.type === "error",
    reopen: async (since) => {
      if (processId === undefined) throw new SandboxConnectionError(`exec stream of "${command}" broke before it started`);
      try {
        return await rpc.resumeExecStream(processId, since === undefined ? {} : { since });
      } catch (error) {
        // A finished exec's record is kept a minute (LIMITS.finishedExecRetentionMs); past that it is gone.
        if (!(error instanceof ProcessNotFoundError)) throw error;
        throw new ProcessNotFoundError(`"${command}" finished while its output stream was disconnected, and its record has expired`, {
          cause: error,
          context: { processId, lastEventId: since },
        });
      }
    },
  });
  for await (const event of events) {
    if (event.type === "start") processId = event.processId;
    yield event;
  }
}

/** A process's log events after `since` (default: all that are retained), up to its final status. */
export async function* logEvents(
  rpc: SandboxRpc,
  processId: string,
  options: StreamOptions & { since?: number | undefined; ref?: HandleRef },
): AsyncGenerator<LogEvent> {
  options.signal?.throwIfAborted();
  const open = (since: number | undefined) => rpc.streamProcessLogs(processId, { ...options.ref, ...(since === undefined ? {} : { since }) });
  yield* resumableEvents<LogEvent>(await open(options.since), {
    describe: `log stream of process "${processId}"`,
    signal: options.signal,
    retry: options.retry,
    isFinal: (event) => event.type === "status" && isTerminalStatus(event.status),
    reopen: (since) => open(since ?? options.since),
  });
}

/** Text of an output event, decoding base64 output to UTF-8. */
export function outputText(event: { data: string; encoding?: string }): string {
  return event.encoding === "base64" ? base64ToText(event.data) : event.data;
}
