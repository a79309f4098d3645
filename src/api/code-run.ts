/**
 * A buffered run for /v1 callers, taken over the run's event stream rather than the buffered call,
 * so that a caller that goes away before its cell ends takes the cell with it: the answer's body is
 * opened at once and a space (JSON allows leading whitespace) is written every
 * CODE_LIMITS.disconnectProbeMs until the Execution follows. A write to a caller that is gone fails,
 * the run's stream is cancelled, and the container (whose stream was opened with
 * interruptOnDisconnect) interrupts the cell. Over the buffered call no write would ever fail, and
 * the cell would keep its context busy to the end. The Execution is built from the events as the
 * container builds it (protocol/code-execution.ts).
 */
import { CODE_LIMITS, type CodeEvent, type RunCodeRequest } from "../../protocol/code.ts";
import { DEFAULT_EXECUTION_LIMITS, ExecutionBuilder } from "../../protocol/code-execution.ts";
import { readEventStream } from "../../protocol/sse.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";

const SPACE = new Uint8Array([0x20]);

/** Errors before the run is accepted (an unknown context, a busy one) are thrown; after, the body breaks. */
export async function runCodeBuffered(sandbox: SandboxRpc, code: string, options: Omit<RunCodeRequest, "code">): Promise<Response> {
  const limits = { ...DEFAULT_EXECUTION_LIMITS, ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }) };
  const events = await sandbox.runCodeStream(code, { ...options, interruptOnDisconnect: true });
  const callerGone = new AbortController();
  let probe: ReturnType<typeof setInterval> | undefined;
  const pump = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const builder = new ExecutionBuilder(code, limits);
    try {
      for await (const event of readEventStream<CodeEvent>(events, callerGone.signal)) builder.add(event);
      const execution = builder.result();
      if (!execution) throw new Error("the run's event stream ended before the run completed");
      controller.enqueue(new TextEncoder().encode(JSON.stringify(execution)));
      controller.close();
    } catch (error) {
      if (!callerGone.signal.aborted) controller.error(error);
    } finally {
      clearInterval(probe);
    }
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      probe = setInterval(() => controller.enqueue(SPACE), CODE_LIMITS.disconnectProbeMs);
      void pump(controller);
    },
    cancel(reason) {
      clearInterval(probe);
      callerGone.abort(reason);
    },
  });
  return new Response(body, { headers: { "content-type": "application/json" } });
}
