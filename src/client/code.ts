/**
 * The code interpreter over any SandboxRpc (the Durable Object stub or the /v1 HTTP API): contexts,
 * runs, and streamed runs. A run with callbacks or a signal goes over the event stream, and its
 * Execution is built from the events the way the container builds a buffered one
 * (protocol/code-execution.ts); a plain run is one buffered call.
 */
import type { CodeContext, CodeEvent, Execution } from "../../protocol/code.ts";
import { DEFAULT_EXECUTION_LIMITS, ExecutionBuilder } from "../../protocol/code-execution.ts";
import type { CodeContextOptions, DeleteCodeContextResult, InterruptCodeResult, RunCodeRequestOptions } from "../rpc/code.ts";
import { SandboxError } from "../rpc/errors.ts";
import type { CodeInterpreter, RunCodeOptions, RunCodeStreamOptions } from "./code-api.ts";
import { codeEvents } from "./code-events.ts";
import type { Connection } from "./connection.ts";

const contextId = (context: string | CodeContext) => (typeof context === "string" ? context : context.id);

function runWire(options: RunCodeOptions & RunCodeStreamOptions): RunCodeRequestOptions {
  const wire: RunCodeRequestOptions = {};
  if (options.context !== undefined) wire.contextId = contextId(options.context);
  if (options.language !== undefined) wire.language = options.language;
  if (options.timeout !== undefined) wire.timeout = options.timeout;
  if (options.wait !== undefined) wire.wait = options.wait;
  if (options.maxOutputBytes !== undefined) wire.maxOutputBytes = options.maxOutputBytes;
  if (options.interruptOnDisconnect !== undefined) wire.interruptOnDisconnect = options.interruptOnDisconnect;
  const env = runEnv(options);
  if (env) wire.env = env;
  if (options.idempotencyKey !== undefined) wire.idempotencyKey = options.idempotencyKey;
  return wire;
}

/** A run's own variables: `env`, over `envVars` without its unset entries. */
function runEnv({ env, envVars }: RunCodeOptions): Record<string, string> | undefined {
  if (env === undefined && envVars === undefined) return undefined;
  const given = Object.entries(envVars ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === "string");
  return { ...Object.fromEntries(given), ...env };
}

export class CodeInterpreterClient implements CodeInterpreter {
  readonly #connection: Connection;

  constructor(connection: Connection) {
    this.#connection = connection;
  }

  createCodeContext(options: CodeContextOptions = {}): Promise<CodeContext> {
    return this.#connection.rpc.createCodeContext(options);
  }

  listCodeContexts(): Promise<CodeContext[]> {
    return this.#connection.rpc.listCodeContexts();
  }

  getCodeContext(id: string): Promise<CodeContext> {
    return this.#connection.rpc.getCodeContext(id);
  }

  deleteCodeContext(context: string | CodeContext): Promise<DeleteCodeContextResult> {
    return this.#connection.rpc.deleteCodeContext(contextId(context));
  }

  restartCodeContext(context: string | CodeContext): Promise<CodeContext> {
    return this.#connection.rpc.restartCodeContext(contextId(context));
  }

  interruptCode(executionId: string): Promise<InterruptCodeResult> {
    return this.#connection.rpc.interruptCode(executionId);
  }

  async runCode(code: string, options: RunCodeOptions = {}): Promise<Execution> {
    const streaming = options.onStdout || options.onStderr || options.onResult || options.onError || options.signal;
    if (!streaming) return this.#connection.rpc.runCode(code, runWire(options));
    const builder = new ExecutionBuilder(code, { ...DEFAULT_EXECUTION_LIMITS, ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }) });
    for await (const event of this.runCodeStream(code, options)) {
      builder.add(event);
      if (event.type === "stdout") options.onStdout?.(event.data);
      else if (event.type === "stderr") options.onStderr?.(event.data);
      else if (event.type === "result") options.onResult?.(event.result);
      else if (event.type === "error") options.onError?.(event.error);
    }
    const execution = builder.result();
    if (!execution) throw new SandboxError("The event stream of a run ended before the run completed", "CONNECTION_FAILED");
    return execution;
  }

  async *runCodeStream(code: string, options: RunCodeStreamOptions = {}): AsyncGenerator<CodeEvent> {
    const { signal } = options;
    const wire = runWire(options);
    // With a signal, a cancelled stream must take the cell with it even if the interrupt call is lost.
    if (signal) wire.interruptOnDisconnect = true;
    let executionId: string | undefined;
    let ended = false;
    try {
      for await (const event of codeEvents(this.#connection.rpc, code, wire, { signal, retry: this.#connection.retry })) {
        if (event.type === "start") executionId = event.executionId;
        if (event.type === "complete") ended = true;
        yield event;
      }
      ended = true;
    } finally {
      // Stopped early (abort, break, or a failure): interrupt now rather than wait for the server to
      // notice the closed stream.
      if (!ended && wire.interruptOnDisconnect && executionId !== undefined) {
        await this.#connection.rpc.interruptCode(executionId).catch(() => undefined);
      }
    }
  }
}
