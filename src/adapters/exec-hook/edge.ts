/**
 * The `edge` exec-hook sandbox: each request runs as a process in a sandbox of this service, with
 * its stdin fed as bytes and its stdout and stderr read back as bytes (base64 on the wire), so any
 * payload round-trips unchanged. It follows the process's log to the exit; a failure to reach the
 * service is a TransportError as soon as the connection fails.
 */
import { isTerminalStatus, succeeded } from "../../../protocol/process.ts";
import { ProcessNotRunningError, type Process, type SandboxClient } from "../../client/index.ts";
import { base64ToBytes, bytesToBase64, concatBytes } from "../../rpc/bytes.ts";
import { connect, type SandboxConnection } from "../shared/connection.ts";
import { ExitError, TimeoutError, TransportError } from "./errors.ts";
import { prepareRequest, type PreparedRequest } from "./request.ts";
import type { ExecHookRequest, ExecHookResponse, ExecHookSandbox, ExecHookSpawnOptions } from "./types.ts";

export type EdgeExecHookConfig = SandboxConnection & {
  /** Time limit of requests that give none, in milliseconds (none when unset). */
  timeoutMs?: number;
  /** Working directory of the processes (relative: inside the sandbox's workspace). */
  cwd?: string;
};

type Failure = ExitError | TimeoutError | TransportError;

/** Stdin goes over in pieces: each write is one request, well under the service's per-write limit. */
const STDIN_PIECE_BYTES = 1024 * 1024;

export class EdgeExecHookSandbox implements ExecHookSandbox {
  readonly #client: SandboxClient;
  readonly #config: EdgeExecHookConfig;
  /** Spawns in flight, aborted by close(). */
  readonly #running = new Set<AbortController>();
  #closed = false;

  constructor(config: EdgeExecHookConfig) {
    this.#client = connect(config);
    this.#config = config;
  }

  name(): string {
    return "edge";
  }

  async spawn(request: ExecHookRequest, options: ExecHookSpawnOptions = {}): Promise<ExecHookResponse> {
    const prepared = prepareRequest(request, this.#config.timeoutMs);
    options.signal?.throwIfAborted();
    if (this.#closed) return response([], [], new TransportError("the sandbox is closed"));
    const stop = new AbortController();
    const onAbort = () => stop.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    this.#running.add(stop);
    try {
      return await this.#run(prepared, stop.signal);
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      this.#running.delete(stop);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const stop of this.#running) stop.abort(new TransportError("the sandbox was closed"));
  }

  async #run(request: PreparedRequest, signal: AbortSignal): Promise<ExecHookResponse> {
    const stdout: Uint8Array[] = [];
    const stderr: Uint8Array[] = [];
    let process: Process | undefined;
    const kill = () => void process?.kill("SIGKILL").catch(() => undefined);
    // Reading stops when the caller aborts, or when stdin cannot be delivered (the process would wait for it forever).
    const reading = new AbortController();
    const stopReading = () => {
      kill();
      reading.abort(signal.reason);
    };
    signal.addEventListener("abort", stopReading, { once: true });
    try {
      // A hook's subprocess is a fresh process by the exec-hook contract: isolated from every session.
      process = await this.#client.startProcess(request.command, {
        isolated: true,
        args: request.args,
        encoding: "base64",
        ...(request.env === undefined ? {} : { env: request.env }),
        ...(this.#config.cwd === undefined ? {} : { cwd: this.#config.cwd }),
        ...(request.timeoutMs === undefined ? {} : { timeout: request.timeoutMs }),
      });
      if (signal.aborted) stopReading();
      const fed = feedStdin(this.#client, process.id, request.stdin).catch((error: unknown) => {
        kill();
        reading.abort(new TransportError(`could not write stdin: ${messageOf(error)}`, { cause: error }));
      });
      const failure = await readToExit(process, request.timeoutMs, reading.signal, stdout, stderr);
      await fed;
      return response(stdout, stderr, failure);
    } catch (error) {
      const cause = reading.signal.aborted ? reading.signal.reason : error;
      // The caller's own abort reason is theirs to see; everything else is a transport failure.
      if (signal.aborted && cause === signal.reason && !(cause instanceof TransportError)) throw cause;
      return response(stdout, stderr, cause instanceof TransportError ? cause : new TransportError(messageOf(cause), { cause }));
    } finally {
      signal.removeEventListener("abort", stopReading);
    }
  }
}

export function edgeExecHookSandbox(config: EdgeExecHookConfig): EdgeExecHookSandbox {
  return new EdgeExecHookSandbox(config);
}

/** Collects the process's output from its log until it ends; the failure, if it failed. */
async function readToExit(
  process: Process,
  timeoutMs: number | undefined,
  signal: AbortSignal,
  stdout: Uint8Array[],
  stderr: Uint8Array[],
): Promise<Failure | undefined> {
  for await (const event of process.streamLogs({ signal })) {
    if (event.type === "stdout") stdout.push(base64ToBytes(event.data));
    else if (event.type === "stderr") stderr.push(base64ToBytes(event.data));
    else if (event.type === "truncated") throw new TransportError(`${event.droppedBytes} bytes of output were lost before they could be read`);
    else if (event.type === "status" && isTerminalStatus(event.status)) {
      if (event.status === "error") return new TransportError(`the process could not run: ${event.error ?? "lost"}`);
      if (event.timedOut) return new TimeoutError(timeoutMs ?? 0);
      if (succeeded(event)) return undefined;
      return new ExitError(event.exitCode ?? 1, event.signal);
    }
  }
  signal.throwIfAborted();
  throw new TransportError("the output stream ended before the process exited");
}

/** Writes the stdin bytes, then EOF. A process that exits before reading them all just does not get them. */
async function feedStdin(client: SandboxClient, processId: string, stdin: Uint8Array | undefined): Promise<void> {
  try {
    if (stdin === undefined) {
      await client.closeStdin(processId);
      return;
    }
    for (let at = 0; at < stdin.length; at += STDIN_PIECE_BYTES) {
      const last = at + STDIN_PIECE_BYTES >= stdin.length;
      await client.writeStdin(processId, bytesToBase64(stdin.subarray(at, at + STDIN_PIECE_BYTES)), { encoding: "base64", close: last });
    }
  } catch (error) {
    if (!(error instanceof ProcessNotRunningError)) throw error;
  }
}

function response(stdout: Uint8Array[], stderr: Uint8Array[], error: Failure | undefined): ExecHookResponse {
  return { stdout: concatBytes(stdout), stderr: concatBytes(stderr), ...(error === undefined ? {} : { error }) };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
