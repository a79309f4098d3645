/**
 * The shapes that cross between caller and Durable Object (Workers RPC) or Worker API (HTTP).
 * Wire records come from protocol/; this file adds what the Worker side knows: the container
 * generation a process belongs to, and the options each method takes.
 */
import type { FileEncoding, FileInfo, FileType } from "../../protocol/files.ts";
import type { InfoResponse } from "../../protocol/info.ts";
import type { IsolationRequest, IsolationSupport } from "../../protocol/isolation.ts";
import type { ExecRequest, ProcessInfo, ProcessStatus, OutputEncoding, ExecResult } from "../../protocol/process.ts";
import type { SessionInfo } from "../../protocol/sessions.ts";

/** A process as the Durable Object reports it: the container's record plus its container generation. */
export interface ProcessRecord extends ProcessInfo {
  /**
   * The container instance this process lives in (its ping `instanceId`). A process handle sends
   * it back, and any call about the process fails with STALE_PROCESS_HANDLE once the container
   * restarted — the id may by then name a different process.
   */
  generation: string;
}

/** Ties a call to the container generation of the handle making it. */
export interface HandleRef {
  generation?: string;
}

/** Wire options of `exec`/`execStream` (everything of the exec request but the command). */
export type ExecRequestOptions = Omit<ExecRequest, "command">;

/** Wire options of `startProcess` (flat form of the start request). */
export interface StartRequestOptions {
  processId?: string;
  sessionId?: string;
  timeout?: number;
  timeoutMs?: number;
  env?: Record<string, string>;
  cwd?: string;
  args?: string[];
  encoding?: "utf8" | "utf-8" | "base64";
  autoCleanup?: boolean;
  logRetentionBytes?: number;
}

export interface ProcessLogs {
  processId: string;
  stdout: string;
  stderr: string;
  encoding?: OutputEncoding;
  stdoutDropped?: number;
  stderrDropped?: number;
}

export interface KillResult {
  processId: string;
  signal: string;
  status: ProcessStatus;
}

export interface StdinResult {
  processId: string;
  bytesWritten: number;
  closed: boolean;
}

export interface LogStreamRequest extends HandleRef {
  /** Resume after this event id (`seq`): only later events are sent. */
  since?: number;
}

export interface ListRequest {
  sessionId?: string;
}

export interface KillAllRequest {
  sessionId?: string;
  signal?: string | number;
}

/** What a sandbox reports about itself. */
export interface SandboxInfo {
  /** The container generation now running (its instance id). */
  generation: string;
  /** How many containers this sandbox has started so far, counting this one. */
  generationNumber: number;
  containerStartedAt: string;
  sleepAfter: string;
}

/**
 * Sandbox-wide settings, given to getSandbox() and kept by the Durable Object.
 *
 * The isolation fields (`isolation`, `allowNetwork`, `readOnlyPaths`, `readWritePaths`,
 * `allowSystemBinaries`, `bwrapArgs`) confine commands under the local container runtime, where no real
 * container wraps them. On Cloudflare the container itself is the wall and these fields are not used.
 * Changing them while the container runs restarts it (its processes end), so the walls always match.
 */
export interface SandboxConfig extends IsolationRequest {
  /** Idle time before the container sleeps, e.g. "10m", "30s" or seconds as a number. */
  sleepAfter?: string | number;
  /** Environment of the container (replaces the sandbox env vars; applied to the running container too). */
  envVars?: Record<string, string>;
}

// ── sessions, env ───────────────────────────────────────────────────────────

export interface CreateSessionOptions {
  /** Default: a generated id. */
  id?: string;
  /** Variables the session sets on top of the sandbox env. */
  env?: Record<string, string>;
  /** Starting directory (relative: against the workspace). */
  cwd?: string;
}

export interface DeleteSessionResult {
  sessionId: string;
  /** Processes of the session that were still running and were killed. */
  killed: number;
}

/** Variables to set; `null` or `undefined` unsets one. */
export type EnvVarsUpdate = Record<string, string | null | undefined>;

export interface SetEnvOptions {
  /** Set the variables in this session only (default: for the whole sandbox). */
  sessionId?: string;
}

// ── files ───────────────────────────────────────────────────────────────────

export interface WriteFileOptions {
  /** How `content` is encoded (default utf8). */
  encoding?: FileEncoding;
  /** Create missing parent directories (default true). */
  createParents?: boolean;
  /** Permission bits, e.g. 0o755 or "755". */
  mode?: number | string;
}

export type WriteStreamOptions = Omit<WriteFileOptions, "encoding">;

export interface WriteFileResult {
  path: string;
  bytesWritten: number;
}

export interface ReadFileOptions {
  /** Default: utf8 for text, base64 for binary files. */
  encoding?: FileEncoding;
}

export interface FileContent {
  path: string;
  content: string;
  encoding: FileEncoding;
  size: number;
  mimeType: string;
  isBinary: boolean;
}

/** A file opened for reading as a byte stream, with what is known about it up front. */
export interface FileStream {
  path: string;
  size: number;
  mimeType: string;
  isBinary: boolean;
  stream: ReadableStream<Uint8Array>;
}

export interface MkdirOptions {
  /** Create parents and accept an existing directory (default false). */
  recursive?: boolean;
  mode?: number | string;
}

export interface DeleteFileOptions {
  /** Needed to delete a directory with what is in it. */
  recursive?: boolean;
}

export interface MoveOptions {
  /** Replace an existing target (default false). */
  overwrite?: boolean;
}

export interface ListFilesOptions {
  recursive?: boolean;
  /** Include names starting with "." (default false). */
  includeHidden?: boolean;
  maxEntries?: number;
}

export interface FileListing {
  path: string;
  files: FileInfo[];
  count: number;
  /** True when `maxEntries` cut the listing short. */
  truncated: boolean;
}

export interface ExistsResult {
  path: string;
  exists: boolean;
  type?: FileType;
}

// ── the sandbox as a whole ──────────────────────────────────────────────────

/** getInfo(): the sandbox's generation and settings with what its container server reports. */
export type SandboxDetails = SandboxInfo & Omit<InfoResponse, "success" | "timestamp" | "instanceId">;

/**
 * The Durable Object's RPC surface (also what the HTTP client implements over /v1). Streams are SSE
 * bytes (file streams: raw bytes); errors are thrown with the wire code encoded (see errors.ts).
 */
export interface SandboxRpc {
  exec(command: string, options?: ExecRequestOptions): Promise<ExecResult>;
  execStream(command: string, options?: ExecRequestOptions): Promise<ReadableStream<Uint8Array>>;
  startProcess(command: string, options?: StartRequestOptions): Promise<ProcessRecord>;
  listProcesses(options?: ListRequest): Promise<ProcessRecord[]>;
  getProcess(id: string, ref?: HandleRef): Promise<ProcessRecord | null>;
  killProcess(id: string, signal?: string | number, ref?: HandleRef): Promise<KillResult>;
  killAllProcesses(options?: KillAllRequest): Promise<number>;
  streamProcessLogs(id: string, options?: LogStreamRequest): Promise<ReadableStream<Uint8Array>>;
  getProcessLogs(id: string, ref?: HandleRef): Promise<ProcessLogs>;
  cleanupCompletedProcesses(): Promise<number>;
  writeStdin(id: string, data: string, options?: HandleRef & { encoding?: "utf8" | "base64"; close?: boolean }): Promise<StdinResult>;
  closeStdin(id: string, ref?: HandleRef): Promise<StdinResult>;

  createSession(options?: CreateSessionOptions): Promise<SessionInfo>;
  /** Throws SESSION_NOT_FOUND for an unknown id. */
  getSession(id: string): Promise<SessionInfo>;
  listSessions(): Promise<SessionInfo[]>;
  /** Deletes the session and kills its processes. */
  deleteSession(id: string): Promise<DeleteSessionResult>;
  /** Sandbox-level variables are kept by the sandbox (they survive a container restart); a session's live in the container. */
  setEnvVars(vars: EnvVarsUpdate, options?: SetEnvOptions): Promise<void>;

  writeFile(path: string, content: string, options?: WriteFileOptions): Promise<WriteFileResult>;
  /** Streams `body` into the file: never held whole in memory on the way. */
  writeFileStream(path: string, body: ReadableStream<Uint8Array>, options?: WriteStreamOptions): Promise<WriteFileResult>;
  readFile(path: string, options?: ReadFileOptions): Promise<FileContent>;
  readFileStream(path: string): Promise<FileStream>;
  mkdir(path: string, options?: MkdirOptions): Promise<{ path: string; created: boolean }>;
  deleteFile(path: string, options?: DeleteFileOptions): Promise<{ path: string }>;
  renameFile(oldPath: string, newPath: string, options?: MoveOptions): Promise<{ oldPath: string; newPath: string }>;
  moveFile(sourcePath: string, destinationPath: string, options?: MoveOptions): Promise<{ sourcePath: string; destinationPath: string }>;
  listFiles(path?: string, options?: ListFilesOptions): Promise<FileListing>;
  exists(path: string): Promise<ExistsResult>;

  configure(config: SandboxConfig): Promise<void>;
  info(): Promise<SandboxInfo>;
  getInfo(): Promise<SandboxDetails>;
  getInstructions(): Promise<string>;
  /** What isolation the machine running this sandbox offers (locally: the container runtime's machine). */
  detectIsolation(): Promise<IsolationSupport>;
  destroy(): Promise<void>;
}

export type { FileInfo, FileType, FileEncoding, SessionInfo, IsolationSupport };
