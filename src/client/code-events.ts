/**
 * A run's code events, over Workers RPC and HTTP alike, resumed from where they broke off (the last
 * event id, and the byte offsets within a cut output event) when the connection breaks (src/rpc/resumable-stream.ts). A cell cannot be run again to resume it: after a break the
 * events continue from the container's record of the run (kept a while after it ends), up to `complete`.
 */
import type { CodeEvent } from "../../protocol/code.ts";
import { errorFromCode, SandboxConnectionError, SandboxError } from "../rpc/errors.ts";
import type { RunCodeRequestOptions } from "../rpc/code.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { StreamOptions } from "../rpc/event-streams.ts";
import { resumableEvents } from "../rpc/resumable-stream.ts";

export async function* codeEvents(rpc: SandboxRpc, code: string, wire: RunCodeRequestOptions, options: StreamOptions): AsyncGenerator<CodeEvent> {
  options.signal?.throwIfAborted();
  const first = await rpc.runCodeStream(code, wire);
  let executionId: string | undefined;
  const events = resumableEvents<CodeEvent>(first, {
    describe: "code run stream",
    ...options,
    isFinal: (event) => event.type === "complete",
    reopen: async (point) => {
      if (executionId === undefined) throw new SandboxConnectionError("code run stream broke before the run was accepted");
      try {
        return await rpc.resumeCodeStream(executionId, point);
      } catch (error) {
        // A finished run is kept a minute (LIMITS.finishedExecRetentionMs); past that it is gone.
        if (!(error instanceof SandboxError) || error.code !== "CODE_EXECUTION_NOT_FOUND") throw error;
        throw errorFromCode("CODE_EXECUTION_NOT_FOUND", "The run finished while its event stream was disconnected, and its record has expired", {
          cause: error,
          context: { executionId, ...point },
        });
      }
    },
  });
  for await (const event of events) {
    if (event.type === "start") executionId = event.executionId;
    yield event;
  }
}
