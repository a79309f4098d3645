/**
 * What a sandbox and each of its sessions offer (SandboxCommands) over any SandboxRpc: the Durable
 * Object stub (getSandbox) or the /v1 HTTP API (getHttpSandbox). Callbacks, AbortSignals and stream
 * parsing happen here, on the caller's side. Bound to a session, every command runs in it and the
 * process list and kill-all cover only its processes.
 */
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import { isTerminalStatus, type ExecResult } from "../../protocol/process.ts";
import type {
  AttachOptions,
  CommandHandle,
  ExecOptions,
  ExecStreamOptions,
  LogStreamOptions,
  Process,
  ProcessOptions,
  RunOptions,
  SandboxCommands,
} from "./api.ts";
import { ResumeCursor } from "../../protocol/resume.ts";
import { asSandboxError, errorFromCode, execEventError, SandboxError } from "../rpc/errors.ts";
import type {
  DeleteFileOptions,
  DeleteFileResult,
  ExistsResult,
  FileContent,
  FileListing,
  ListFilesOptions,
  MkdirOptions,
  MkdirResult,
  MoveFileResult,
  MoveOptions,
  ReadFileOptions,
  RenameFileResult,
  WriteFileOptions,
  WriteFileResult,
  WriteStreamOptions,
} from "../rpc/files.ts";
import type { GitCheckoutOptions, GitCheckoutResult } from "../rpc/git.ts";
import type { ChangesOptions, ChangesResult, WatchEvent, WatchOptions } from "../rpc/watch.ts";
import { readEventStream } from "../../protocol/sse.ts";
import type { ExecRequestOptions, ProcessLogs, StartRequestOptions, StdinResult } from "../rpc/processes.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { EnvVarsUpdate } from "../rpc/sessions.ts";
import { AttachedCommand, attach } from "./command.ts";
import { execEvents, logEvents, newCommandId } from "../rpc/event-streams.ts";
import { outputText } from "../rpc/bytes.ts";
import { bytesToBase64, joinBase64 } from "../rpc/bytes.ts";
import type { Connection } from "./connection.ts";
import { ProcessHandle } from "./process.ts";


function execWire(options: ExecOptions & ExecStreamOptions & RunOptions): ExecRequestOptions {
  const wire: ExecRequestOptions = {};
  if (options.sessionId !== undefined) wire.sessionId = options.sessionId;
  if (options.isolated !== undefined) wire.isolated = options.isolated;
  if (options.timeout !== undefined) wire.timeout = options.timeout;
  if (options.env !== undefined) wire.env = options.env;
  if (options.cwd !== undefined) wire.cwd = options.cwd;
  if (options.encoding !== undefined) wire.encoding = options.encoding;
  if (options.stdin !== undefined) wire.stdin = options.stdin;
  if (options.maxOutputBytes !== undefined) wire.maxOutputBytes = options.maxOutputBytes;
  if (options.processId !== undefined) wire.processId = options.processId;
  if (options.idempotencyKey !== undefined) wire.idempotencyKey = options.idempotencyKey;
  if (options.args !== undefined) wire.args = options.args;
  if (options.killOnDisconnect !== undefined) wire.killOnDisconnect = options.killOnDisconnect;
  if (options.keepStdinOpen !== undefined) wire.keepStdinOpen = options.keepStdinOpen;
  return wire;
}

function startWire(options: ProcessOptions): StartRequestOptions {
  const { onExit: _e, onOutput: _o, onStart: _s, onError: _r, ...wire } = options;
  return wire;
}

export class SandboxOperations implements SandboxCommands {
  protected readonly rpc: SandboxRpc;
  protected readonly connection: Connection;
  /** The session every command runs in (undefined: the sandbox's default). */
  readonly #sessionId: string | undefined;

  constructor(connection: Connection, sessionId?: string) {
    this.connection = connection;
    this.rpc = connection.rpc;
    this.#sessionId = sessionId;
  }

  /** Options with the bound session filled in (a bound session wins over one in the options). */
  #scoped<T extends { sessionId?: string }>(options: T): T {
    return this.#sessionId === undefined ? options : { ...options, sessionId: this.#sessionId };
  }

  /**
   * A command's options with its session decided: the bound one, or, when the client was made with
   * `enableDefaultSession: false`, isolated unless the call names a session or says otherwise.
   */
  #commandScoped<T extends { sessionId?: string; isolated?: boolean }>(options: T): T {
    const scoped = this.#scoped(options);
    const sessionless = this.connection.enableDefaultSession === false && scoped.sessionId === undefined && scoped.isolated === undefined;
    return sessionless ? { ...scoped, isolated: true } : scoped;
  }

  // ── commands ─────────────────────────────────────────────────────────────

  async exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const scoped = this.#commandScoped(options);
    const streaming = scoped.stream || scoped.onOutput || scoped.onComplete || scoped.signal;
    if (!streaming) {
      try {
        return await this.rpc.exec(command, execWire(scoped));
      } catch (error) {
        scoped.onError?.(asSandboxError(error));
        throw error;
      }
    }
    try {
      const result = await this.#execStreaming(command, scoped);
      scoped.onComplete?.(result);
      return result;
    } catch (error) {
      scoped.onError?.(error instanceof Error ? error : asSandboxError(error));
      throw error;
    }
  }

  /** exec over the event stream: output to onOutput as it comes, abort kills the command. */
  async #execStreaming(command: string, options: ExecOptions): Promise<ExecResult> {
    const stdout: string[] = [];
    const stderr: string[] = [];
    let base64 = false;
    const joined = (parts: string[]) => (base64 ? joinBase64(parts) : parts.join(""));
    for await (const event of this.execStream(command, options)) {
      if (event.type === "stdout" || event.type === "stderr") {
        const text = outputText(event);
        (event.type === "stdout" ? stdout : stderr).push(event.encoding === "base64" ? event.data : text);
        base64 ||= event.encoding === "base64";
        options.onOutput?.(event.type, text);
      } else if (event.type === "complete") {
        // The streamed result leaves stdout/stderr empty: every byte came as an event.
        return { ...event.result, stdout: event.result.stdout || joined(stdout), stderr: event.result.stderr || joined(stderr) };
      } else if (event.type === "error") {
        throw execEventError(event, { stdout: joined(stdout), stderr: joined(stderr) });
      }
    }
    throw new SandboxError(`The output stream of "${command}" ended before the command completed`, "CONNECTION_FAILED");
  }

  async *execStream(command: string, options: ExecStreamOptions = {}): AsyncGenerator<ExecEvent> {
    const { signal } = options;
    const wire = { ...execWire(this.#commandScoped(options)), processId: options.processId ?? newCommandId() };
    let ended = false;
    try {
      for await (const event of execEvents(this.rpc, command, wire, { signal, retry: this.connection.retry })) {
        if (event.type === "complete" || event.type === "error") ended = true;
        yield event;
      }
      ended = true;
    } finally {
      // Aborted (or, with killOnDisconnect, stopped early): kill now. A dropped connection was
      // resumed, and one given up on (SandboxConnectionError) leaves the command running.
      const kill = signal?.aborted || (wire.killOnDisconnect && !ended);
      if (!ended && kill) {
        await this.rpc.killProcess(wire.processId, "SIGTERM").catch(() => undefined);
      }
    }
  }

  run(command: string, options: RunOptions & { wait: false }): Promise<CommandHandle>;
  run(command: string, options?: RunOptions & { wait?: true }): Promise<ExecResult>;
  run(command: string, options?: RunOptions): Promise<ExecResult | CommandHandle>;
  async run(command: string, options: RunOptions = {}): Promise<ExecResult | CommandHandle> {
    const handle = await this.#start(command, options);
    return options.wait === false ? handle : handle.result;
  }

  attach(commandId: string, options: AttachOptions = {}): Promise<CommandHandle> {
    return attach(this.connection, commandId, options);
  }

  /** Starts a command and reads up to its start event: then its id and pid are known. */
  async #start(command: string, options: RunOptions): Promise<CommandHandle> {
    const { signal } = options;
    signal?.throwIfAborted();
    const wire = { ...execWire(this.#commandScoped(options)), processId: options.processId ?? newCommandId() };
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal!.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const cursor = new ResumeCursor();
    const events = execEvents(this.rpc, command, wire, { signal: stop.signal, retry: this.connection.retry, cursor });
    let first: IteratorResult<ExecEvent>;
    try {
      first = await events.next();
    } catch (error) {
      if (signal?.aborted) await this.rpc.killProcess(wire.processId, "SIGTERM").catch(() => undefined);
      throw error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    if (first.done || first.value.type !== "start") {
      await events.return(undefined);
      if (!first.done && first.value.type === "error") throw execEventError(first.value);
      throw new SandboxError(`The output stream of "${command}" began without its start event`, "INTERNAL_ERROR");
    }
    const { processId, pid } = first.value;
    return new AttachedCommand({ commandId: processId, pid, generation: undefined, events, cursor, stop, signal }, this.connection);
  }

  // ── processes ────────────────────────────────────────────────────────────

  async startProcess(command: string, options: ProcessOptions = {}): Promise<Process> {
    let process: ProcessHandle;
    try {
      process = new ProcessHandle(await this.rpc.startProcess(command, startWire(this.#commandScoped(options))), this.connection);
    } catch (error) {
      options.onError?.(asSandboxError(error));
      throw error;
    }
    options.onStart?.(process);
    if (options.onOutput || options.onExit || options.onError) void follow(process, options);
    return process;
  }

  async listProcesses(options: { sessionId?: string } = {}): Promise<Process[]> {
    return (await this.rpc.listProcesses(this.#scoped(options))).map((record) => new ProcessHandle(record, this.connection));
  }

  async getProcess(id: string): Promise<Process | null> {
    const record = await this.rpc.getProcess(id);
    return record ? new ProcessHandle(record, this.connection) : null;
  }

  async killProcess(id: string, signal?: string | number): Promise<void> {
    await this.rpc.killProcess(id, signal);
  }

  killAllProcesses(options: { sessionId?: string; signal?: string | number } = {}): Promise<number> {
    return this.rpc.killAllProcesses(this.#scoped(options));
  }

  streamProcessLogs(processId: string, options: LogStreamOptions = {}): AsyncGenerator<LogEvent> {
    return logEvents(this.rpc, processId, { ...options, retry: this.connection.retry });
  }

  getProcessLogs(id: string): Promise<ProcessLogs> {
    return this.rpc.getProcessLogs(id);
  }

  writeStdin(processId: string, data: string, options: { encoding?: "utf8" | "base64"; close?: boolean } = {}): Promise<StdinResult> {
    return this.rpc.writeStdin(processId, data, options);
  }

  closeStdin(processId: string): Promise<StdinResult> {
    return this.rpc.closeStdin(processId);
  }

  // ── env ──────────────────────────────────────────────────────────────────

  setEnvVars(vars: EnvVarsUpdate): Promise<void> {
    // JSON (the HTTP transport) drops undefined values; null says "unset" everywhere.
    const update = Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, value ?? null]));
    return this.rpc.setEnvVars(update, this.#sessionId === undefined ? {} : { sessionId: this.#sessionId });
  }

  // ── files ────────────────────────────────────────────────────────────────

  /**
   * A path as the container should see it. Through a session, a relative path starts from the
   * session's cwd as it is now (asked of the sandbox; `cd` moves it); without one, the container
   * resolves it against the workspace. Absolute paths go as they are.
   */
  async #path(path: string): Promise<string>;
  async #path(path: string | undefined): Promise<string | undefined>;
  async #path(path: string | undefined): Promise<string | undefined> {
    if (this.#sessionId === undefined || path?.startsWith("/")) return path;
    const { cwd } = await this.rpc.getSession(this.#sessionId);
    return path === undefined || path === "" ? cwd : `${cwd.replace(/\/+$/, "")}/${path}`;
  }

  async writeFile(path: string, content: string | Uint8Array, options: WriteFileOptions = {}): Promise<WriteFileResult> {
    const target = await this.#path(path);
    if (typeof content === "string") return this.rpc.writeFile(target, content, options);
    return this.rpc.writeFile(target, bytesToBase64(content), { ...options, encoding: "base64" });
  }

  async writeFileStream(path: string, body: ReadableStream<Uint8Array>, options: WriteStreamOptions = {}): Promise<WriteFileResult> {
    return this.rpc.writeFileStream(await this.#path(path), body, options);
  }

  async readFile(path: string, options: ReadFileOptions = {}): Promise<FileContent> {
    return this.rpc.readFile(await this.#path(path), options);
  }

  async readFileStream(path: string): Promise<ReadableStream<Uint8Array>> {
    return (await this.rpc.readFileStream(await this.#path(path))).stream;
  }

  async mkdir(path: string, options: MkdirOptions = {}): Promise<MkdirResult> {
    return this.rpc.mkdir(await this.#path(path), options);
  }

  async deleteFile(path: string, options: DeleteFileOptions = {}): Promise<DeleteFileResult> {
    return this.rpc.deleteFile(await this.#path(path), options);
  }

  async renameFile(oldPath: string, newPath: string, options: MoveOptions = {}): Promise<RenameFileResult> {
    return this.rpc.renameFile(await this.#path(oldPath), await this.#path(newPath), options);
  }

  async moveFile(sourcePath: string, destinationPath: string, options: MoveOptions = {}): Promise<MoveFileResult> {
    return this.rpc.moveFile(await this.#path(sourcePath), await this.#path(destinationPath), options);
  }

  /** Without a path: the workspace (through a session: its cwd). */
  async listFiles(path?: string, options: ListFilesOptions = {}): Promise<FileListing> {
    return this.rpc.listFiles(await this.#path(path), options);
  }

  async exists(path: string): Promise<ExistsResult> {
    return this.rpc.exists(await this.#path(path));
  }

  async *watch(path: string, options: WatchOptions & { signal?: AbortSignal } = {}): AsyncGenerator<WatchEvent> {
    const { signal, ...watchOptions } = options;
    signal?.throwIfAborted();
    yield* readEventStream<WatchEvent>(await this.rpc.watch(await this.#path(path), watchOptions), signal);
  }

  async checkChanges(path: string, options: ChangesOptions = {}): Promise<ChangesResult> {
    return this.rpc.checkChanges(await this.#path(path), options);
  }

  // ── git ──────────────────────────────────────────────────────────────────

  gitCheckout(repoUrl: string, options: GitCheckoutOptions = {}): Promise<GitCheckoutResult> {
    return this.rpc.gitCheckout(repoUrl, this.#scoped(options));
  }
}

/** Feeds a started process's callbacks from its log stream until it exits. */
async function follow(process: ProcessHandle, options: ProcessOptions): Promise<void> {
  try {
    for await (const event of process.streamLogs()) {
      if (event.type === "stdout" || event.type === "stderr") {
        options.onOutput?.(event.type, outputText(event));
      } else if (event.type === "error") {
        options.onError?.(errorFromCode(event.code ?? "INTERNAL_ERROR", event.error));
      } else if (event.type === "status" && isTerminalStatus(event.status)) {
        options.onExit?.(event.exitCode ?? null);
        return;
      }
    }
    // Ended without a final status: report how the process actually ended, if it did.
    const exit = await process.waitForExit();
    options.onExit?.(exit.exitCode);
  } catch (error) {
    options.onError?.(asSandboxError(error));
  }
}
