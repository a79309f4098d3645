/**
 * The public API of a sandbox, as getSandbox() (Workers) and getHttpSandbox() (anywhere) return it:
 * the surface of Cloudflare's Sandbox SDK ISandbox, with typed options. AbortSignals and callbacks
 * live on the caller's side.
 */
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import type { ExecResult, ProcessStatus } from "../../protocol/process.ts";
import type { CommandEnvVars, SessionInfo } from "../../protocol/sessions.ts";
import type { WriteFileOptions, WriteFileResult } from "../rpc/files.ts";
import type { GitCheckoutOptions, GitCheckoutResult } from "../rpc/git.ts";
import type { ChangesOptions, ChangesResult, WatchEvent, WatchOptions } from "../rpc/watch.ts";
import type { ProcessLogs, StdinResult } from "../rpc/processes.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { CodeInterpreter } from "./code-api.ts";
import type { CreateSessionOptions, DeleteSessionResult, EnvVarsUpdate } from "../rpc/sessions.ts";
import type { AuditEvent } from "../rpc/network.ts";
import type { AuditStreamOptions } from "./audit-events.ts";

export type OutputCallback = (stream: "stdout" | "stderr", data: string) => void;

export interface BaseExecOptions {
  /** The session to run in (default: the sandbox's default session, whose cwd, env, functions, aliases and options carry between commands). */
  sessionId?: string;
  /** Run from a clean state (the sandbox's env, the workspace) and leave nothing behind in any session. */
  isolated?: boolean;
  /**
   * Time limit in milliseconds: past it the command is killed (its whole tree) and the call rejects
   * with ExecutionTimeoutError carrying the result so far (a background process ends `timedOut: true`).
   */
  timeout?: number;
  /** On top of the sandbox's and the session's; null unsets a variable for this command. */
  env?: CommandEnvVars;
  cwd?: string;
  /** "base64" returns raw output bytes base64-encoded. */
  encoding?: "utf8" | "base64";
  /**
   * Names this run so that it runs at most once: a retry with the same key within the sandbox's
   * idempotency window (10 minutes) attaches to the first run and gets its result or its stream,
   * and the HTTP client retries such a call by itself when its connection drops. A `processId`
   * names a run the same way.
   */
  idempotencyKey?: string;
}

export interface ExecOptions extends BaseExecOptions {
  /** Stream output as it arrives (to `onOutput`) instead of only returning it at the end. */
  stream?: boolean;
  onOutput?: OutputCallback;
  onComplete?: (result: ExecResult) => void;
  onError?: (error: Error) => void;
  /** Aborting kills the command and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Bytes fed to stdin, then EOF. */
  stdin?: string;
  /**
   * Per-stream cap on the buffered result: lower than LIMITS.maxExecOutputBytes (7 MiB, what Workers
   * RPC carries back), never higher. Past it, `stdoutTruncated`/`stderrTruncated`; stream larger outputs.
   */
  maxOutputBytes?: number;
  processId?: string;
  args?: string[];
}

export interface ExecStreamOptions extends BaseExecOptions {
  /** Aborting kills the command (by id: it is named up front) and ends the iteration with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Kill the command when its reader goes away: on `break`, and on the server when the connection
   * closes (even a dropped one). Default false: it runs on, and a dropped connection is resumed.
   */
  killOnDisconnect?: boolean;
  stdin?: string;
  processId?: string;
  args?: string[];
}

export interface RunOptions extends BaseExecOptions {
  /**
   * true (the default): wait for the command to end and resolve with its ExecResult, as exec does,
   * but over a stream that survives dropped connections. false: resolve at once with a CommandHandle.
   */
  wait?: boolean;
  /** Aborting kills the command; its result (and iteration) end with the signal's reason. */
  signal?: AbortSignal;
  /** Bytes fed to stdin: then EOF, unless keepStdinOpen. */
  stdin?: string;
  /** Keep stdin open for `sendStdin` (default false: stdin is /dev/null, or the `stdin` bytes then EOF). */
  keepStdinOpen?: boolean;
  /** The command's id (default: one the sandbox makes up); `attach` finds it by this id. */
  processId?: string;
  args?: string[];
}

export interface AttachOptions {
  /** Bytes of stdout (and stderr) the caller already has: output before them is not sent again (default 0). */
  stdoutOffset?: number;
  stderrOffset?: number;
  /** Aborting kills the command; its result (and iteration) end with the signal's reason. */
  signal?: AbortSignal;
}

/** A piece of a command's output, in the order the command wrote it across both streams. */
export interface OutputChunk {
  stream: "stdout" | "stderr";
  /** The output: text, or base64 text for a command run with `encoding: "base64"`. */
  data: string;
  /** Byte offset of `data` within its stream. */
  offset: number;
  /**
   * On a chunk that stands for output the sandbox no longer holds (its ring buffer moved on while
   * nobody read): that many bytes before `offset` are missing. Such a chunk has empty `data`.
   */
  dropped?: number;
}

/**
 * A running (or just finished) command: its output as it comes, its result, its stdin, and a kill.
 * Its connection may break: it reconnects by itself where it broke off, to the byte (bounded
 * retries, then SandboxConnectionError), and `reconnect()` picks up from the same place, as does
 * `attach(commandId, { stdoutOffset, stderrOffset })` from another process.
 *
 * Read its output (iterate, or await `result`): like a pipe, a command whose output goes unread
 * (1 MiB of it) waits for its reader.
 */
export interface CommandHandle extends AsyncIterable<OutputChunk> {
  /** The command's id (its process id in the sandbox). */
  readonly commandId: string;
  readonly pid: number | undefined;
  /** Each stream's byte position: output up to here has been handed out (or reported dropped). */
  readonly stdoutOffset: number;
  readonly stderrOffset: number;
  /** Bytes of each stream reported dropped (see OutputChunk.dropped). */
  readonly dropped: { stdout: number; stderr: number };
  /**
   * The command's ExecResult once it ends (`success` as the sandbox decided it), with the output
   * nobody iterated over in stdout/stderr: all of it if you never iterate. Awaiting it reads the
   * rest of the output; after reconnect() it is the new handle's result.
   */
  readonly result: Promise<ExecResult>;
  /** Writes to stdin (needs `keepStdinOpen: true`): text as UTF-8, or bytes. */
  sendStdin(data: string | Uint8Array): Promise<StdinResult>;
  closeStdin(): Promise<StdinResult>;
  /** Signals the command's whole process group (default SIGTERM, then SIGKILL after a grace). */
  kill(signal?: string | number): Promise<void>;
  /** A new handle that goes on from this one's position (this one stops handing out output). */
  reconnect(): Promise<CommandHandle>;
}

export interface LogStreamOptions {
  /** Aborting ends the iteration (the process keeps running). */
  signal?: AbortSignal;
  /** Resume after this event id (an event's `seq`); only later events arrive. */
  since?: number;
}

export interface ProcessOptions extends BaseExecOptions {
  processId?: string;
  args?: string[];
  /** Forget the record some time after exit (default true); false keeps it until cleanup. */
  autoCleanup?: boolean;
  /**
   * Whether the process keeps the sandbox awake while it runs (default true): false for a server
   * left running or a watcher, which should not stop the sandbox from sleeping.
   */
  keepAlive?: boolean;
  /** Bytes of output kept for late readers. */
  logRetentionBytes?: number;
  onExit?: (code: number | null) => void;
  onOutput?: OutputCallback;
  onStart?: (process: Process) => void;
  onError?: (error: Error) => void;
}

export interface ProcessExit {
  status: ProcessStatus;
  exitCode: number | null;
  signal?: string;
  timedOut?: boolean;
}

export interface LogMatch {
  /** The line (or unterminated tail of output) that matched. */
  line: string;
  stream: "stdout" | "stderr";
  match?: RegExpMatchArray;
}

export interface WaitForPortOptions {
  /** Default 60 s. */
  timeout?: number;
  /** Host inside the sandbox to connect to; default 127.0.0.1. */
  host?: string;
}

export interface Process {
  readonly id: string;
  readonly pid?: number;
  readonly command: string;
  /** Status when this handle was made; getStatus() asks again. */
  readonly status: ProcessStatus;
  readonly startTime: Date;
  readonly endTime?: Date;
  readonly exitCode?: number;
  readonly sessionId?: string;
  /** The container generation the process lives in. */
  readonly generation: string;

  kill(signal?: string | number): Promise<void>;
  getStatus(): Promise<ProcessStatus>;
  getLogs(): Promise<{ stdout: string; stderr: string }>;
  /** Resolves when the process has exited; rejects with ExecutionTimeoutError after `timeout` ms. */
  waitForExit(timeout?: number): Promise<ProcessExit>;
  /** Resolves with the first output line matching; rejects if the process exits first or on timeout. */
  waitForLog(pattern: string | RegExp, timeout?: number): Promise<LogMatch>;
  /** Resolves once something accepts connections on `port` inside the sandbox. */
  waitForPort(port: number, options?: WaitForPortOptions): Promise<void>;
  sendStdin(data: string, options?: { encoding?: "utf8" | "base64" }): Promise<StdinResult>;
  closeStdin(): Promise<StdinResult>;
  streamLogs(options?: LogStreamOptions): AsyncIterable<LogEvent>;
}

/** File methods a client offers exactly as the Durable Object does: same arguments, same result. */
type FileMethods = Pick<SandboxRpc, "writeFileStream" | "readFile" | "mkdir" | "deleteFile" | "renameFile" | "moveFile" | "listFiles" | "exists">;

/** What a sandbox as a whole offers exactly as the Durable Object does. */
type SandboxMethods = Pick<
  SandboxRpc,
  | "cleanupCompletedProcesses"
  | "listSessions"
  | "deleteSession"
  | "configure"
  | "info"
  | "status"
  | "getInfo"
  | "getInstructions"
  | "detectIsolation"
  | "destroy"
  | "createBackup"
  | "listBackups"
  | "restoreBackup"
  | "deleteBackup"
  | "fork"
  | "exportArchive"
  | "importArchive"
  | "setNetworkPolicy"
  | "getNetworkPolicy"
  | "setSecret"
  | "listSecrets"
  | "deleteSecret"
  | "getNetworkAudit"
>;

/**
 * What a sandbox and a session of it both offer. On a session (ExecutionSession) commands run in the
 * session, and listProcesses/killAllProcesses cover only its processes. File paths are relative to
 * the workspace either way.
 */
export interface SandboxCommands extends FileMethods {
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /** Runs a command over a stream that survives dropped connections: its result, or (`wait: false`) a handle. */
  run(command: string, options: RunOptions & { wait: false }): Promise<CommandHandle>;
  run(command: string, options?: RunOptions & { wait?: true }): Promise<ExecResult>;
  /** A handle on a command started earlier (also by another client), going on from the given offsets. */
  attach(commandId: string, options?: AttachOptions): Promise<CommandHandle>;
  execStream(command: string, options?: ExecStreamOptions): AsyncIterable<ExecEvent>;
  startProcess(command: string, options?: ProcessOptions): Promise<Process>;
  listProcesses(options?: { sessionId?: string }): Promise<Process[]>;
  getProcess(id: string): Promise<Process | null>;
  killProcess(id: string, signal?: string | number): Promise<void>;
  killAllProcesses(options?: { sessionId?: string; signal?: string | number }): Promise<number>;
  streamProcessLogs(processId: string, options?: LogStreamOptions): AsyncIterable<LogEvent>;
  getProcessLogs(id: string): Promise<ProcessLogs>;
  writeStdin(processId: string, data: string, options?: { encoding?: "utf8" | "base64"; close?: boolean }): Promise<StdinResult>;
  closeStdin(processId: string): Promise<StdinResult>;
  /** Sets (or, with null/undefined, unsets) variables: sandbox-wide and kept across restarts, or the session's. */
  setEnvVars(vars: EnvVarsUpdate): Promise<void>;

  /** Text (utf8), base64 text (`encoding: "base64"`), or bytes; up to 16 MiB — larger files: writeFileStream. */
  writeFile(path: string, content: string | Uint8Array, options?: WriteFileOptions): Promise<WriteFileResult>;
  /** The file's bytes as a stream (any size). */
  readFileStream(path: string): Promise<ReadableStream<Uint8Array>>;
  /**
   * Changes under a directory as they happen: `watching` first (from then on changes are seen), then
   * `change` events with paths relative to it. Runs until `break` or the signal aborts.
   */
  watch(path: string, options?: WatchOptions & { signal?: AbortSignal }): AsyncIterable<WatchEvent>;
  /** Whether anything under `path` changed since `since` (a version an earlier call returned), and the version now. */
  checkChanges(path: string, options?: ChangesOptions): Promise<ChangesResult>;
  /** Clones a repository into the workspace (in the session, on a session). */
  gitCheckout(repoUrl: string, options?: GitCheckoutOptions): Promise<GitCheckoutResult>;
}

/** A session of a sandbox: its own cwd and env, kept between commands (`cd` and `export` persist). */
export interface ExecutionSession extends SandboxCommands {
  /** The session id. */
  readonly id: string;
  readonly sandboxId: string;
  /** The session's state now (cwd, env, running processes). */
  info(): Promise<SessionInfo>;
  /** Deletes the session, killing its processes. */
  delete(): Promise<DeleteSessionResult>;
}

export interface ISandbox extends SandboxCommands, SandboxMethods, CodeInterpreter {
  readonly id: string;
  /** A new session, as an object whose commands run in it. */
  createSession(options?: CreateSessionOptions): Promise<ExecutionSession>;
  /** An existing session (SessionNotFoundError otherwise). */
  getSession(id: string): Promise<ExecutionSession>;
  /** The egress audit trail as it grows (`audit` entries after `since`, `dropped` when the bounded log lost some), across broken connections. */
  streamNetworkAudit(options?: AuditStreamOptions): AsyncIterable<AuditEvent>;
}
