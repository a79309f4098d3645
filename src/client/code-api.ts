/**
 * The code interpreter as a sandbox client offers it (getSandbox and getHttpSandbox alike): stateful
 * Python and JavaScript/TypeScript contexts, runs that resolve with an Execution, and runs that
 * stream their events as they happen. Callbacks and AbortSignals live on the caller's side.
 */
import type { CodeContext, CodeEvent, CodeLanguageName, Execution, ExecutionError, Result } from "../../protocol/code.ts";
import type { CodeContextOptions, DeleteCodeContextResult, InterruptCodeResult } from "../rpc/code.ts";

export interface BaseRunCodeOptions {
  /** The context to run in (its id, or the context itself); default: the sandbox's context for `language`. */
  context?: string | CodeContext;
  /** Without a context: which default context (default python; py, js, ts and sh name them too). */
  language?: CodeLanguageName;
  /** Time limit of the cell in milliseconds: then it is interrupted, and the Execution says `timedOut`. */
  timeout?: number;
  /** A busy context: wait for its turn (default), or fail at once (`false`, CODE_CONTEXT_BUSY). */
  wait?: boolean;
  /** Aborting interrupts the cell (the context keeps its state) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Variables for this run only, on top of the context's; put back as they were when the cell ends. */
  env?: Record<string, string>;
  /** The same as `env`, under the name Cloudflare's SDK gives it (entries without a value are skipped); `env` wins a clash. */
  envVars?: Record<string, string | undefined>;
  /** Names this run so it runs at most once: a retry with the same key attaches to the first run (see exec). */
  idempotencyKey?: string;
}

export interface RunCodeOptions extends BaseRunCodeOptions {
  /** Output as it comes (not line-buffered: a progress bar arrives as it is drawn). */
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
  /** Each result as it comes: display() output and figures mid-cell, the last expression's value at the end. */
  onResult?: (result: Result) => void;
  /** The error the code raised (the run still resolves, with `error` set). */
  onError?: (error: ExecutionError) => void;
  /** Per-stream cap on the stdout/stderr the Execution keeps (bytes). */
  maxOutputBytes?: number;
}

export interface RunCodeStreamOptions extends BaseRunCodeOptions {
  /** Interrupt the cell when the reader stops early (`break`); default false: it runs on. */
  interruptOnDisconnect?: boolean;
}

export interface CodeInterpreter {
  /** A new context (default python); its interpreter is ready when this resolves. */
  createCodeContext(options?: CodeContextOptions): Promise<CodeContext>;
  listCodeContexts(): Promise<CodeContext[]>;
  /** CodeContextNotFoundError for an unknown id. */
  getCodeContext(id: string): Promise<CodeContext>;
  deleteCodeContext(context: string | CodeContext): Promise<DeleteCodeContextResult>;
  /** A fresh interpreter under the same id. */
  restartCodeContext(context: string | CodeContext): Promise<CodeContext>;
  /** Runs a cell; resolves with its Execution (errors in the code are its `error`). */
  runCode(code: string, options?: RunCodeOptions): Promise<Execution>;
  /** A cell's events as they happen: start, stdout, stderr, result, error, complete. Resumes by itself after a broken connection. */
  runCodeStream(code: string, options?: RunCodeStreamOptions): AsyncIterable<CodeEvent>;
  /** Interrupts a run by its id (the `start` event's executionId). */
  interruptCode(executionId: string): Promise<InterruptCodeResult>;
}
