/**
 * A buffered run for /v1 callers, taken over the run's event stream rather than the buffered call,
 * so that a caller that goes away before its cell ends takes the cell with it: the answer's body is
 * opened at once and a space (JSON allows leading whitespace) is written every
 * CODE_LIMITS.disconnectProbeMs until the Execution follows. A write to a caller that is gone fails,
 * the run's stream is cancelled, and the container (whose stream was opened with
 * interruptOnDisconnect) interrupts the cell. Over the buffered call no write would ever fail, and
 * the cell would keep its context busy to the end. The Execution is built from the events as the
 * container builds it (protocol/code-execution.ts).
 *
 * The spaces must reach the caller's socket as they are written, so the answer says it is not to
 * be compressed: an edge that gzips JSON for a caller that accepts it (Node's fetch, Python's httpx
 * and requests all do) would hold them in its compressor, no write would ever fail, and the caller's
 * going away would go unnoticed until the cell ended.
 *
 * Once the body has begun its status is 200 for good: a run the sandbox cannot finish (destroyed
 * under it, its container gone) ends with the error's JSON body, `{ success: false, code, … }`, in
 * place of the Execution, which the HTTP client raises as that code's error.
 */
import { CODE_LIMITS, type CodeEvent, type RunCodeRequest } from "../../protocol/code.ts";
import { DEFAULT_EXECUTION_LIMITS, ExecutionBuilder } from "../../protocol/code-execution.ts";
import { errorBody } from "../../protocol/errors.ts";
import { isStreamEnd } from "../../protocol/events.ts";
import { readEventStream } from "../../protocol/sse.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";

const SPACE = new Uint8Array([0x20]);

/** Headers that keep every hop from holding the answer back to compress it. */
const UNCOMPRESSED = { "content-type": "application/json", "content-encoding": "identity", "cache-control": "no-store, no-transform" } as const;

const BROKE_OFF = "the run's event stream ended before the run completed";

/** Errors before the run is accepted (an unknown context, a busy one) are thrown; after, they end the body. */
export async function runCodeBuffered(sandbox: SandboxRpc, code: string, options: Omit<RunCodeRequest, "code">): Promise<Response> {
  const limits = { ...DEFAULT_EXECUTION_LIMITS, ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }) };
  const events = await sandbox.runCodeStream(code, { ...options, interruptOnDisconnect: true });
  const callerGone = new AbortController();
  let probe: ReturnType<typeof setInterval> | undefined;
  const pump = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    const builder = new ExecutionBuilder(code, limits);
    let answer: unknown;
    try {
      for await (const event of readEventStream<CodeEvent>(events, callerGone.signal)) {
        // The sandbox went away under the run: its coded end is the answer.
        if (isStreamEnd(event)) {
          answer = errorBody(event.code, event.error);
          break;
        }
        builder.add(event);
      }
      answer ??= builder.result() ?? errorBody("CONNECTION_FAILED", BROKE_OFF);
    } catch (error) {
      answer = errorBody("CONNECTION_FAILED", `${BROKE_OFF}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearInterval(probe);
    }
    if (callerGone.signal.aborted) return;
    controller.enqueue(new TextEncoder().encode(JSON.stringify(answer)));
    controller.close();
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
  return new Response(body, { headers: UNCOMPRESSED });
}
