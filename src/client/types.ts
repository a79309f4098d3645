/**
 * The shapes that cross between caller and Durable Object (Workers RPC) or Worker API (HTTP).
 * Wire records come from protocol/; this file adds what the Worker side knows: the container
 * generation a process belongs to, and the options each method takes.
 */
import type { ExecRequest, ProcessInfo, ProcessStatus, OutputEncoding, ExecResult } from "../../protocol/process.ts";

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

/** Sandbox-wide settings, given to getSandbox() and kept by the Durable Object. */
export interface SandboxConfig {
  /** Idle time before the container sleeps, e.g. "10m", "30s" or seconds as a number. */
  sleepAfter?: string | number;
  /** Environment of the container (applies from the next container start). */
  envVars?: Record<string, string>;
}

/**
 * The Durable Object's RPC surface (also what the HTTP client implements over /v1). Streams are SSE
 * bytes; errors are thrown with the wire code encoded (see errors.ts).
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
  configure(config: SandboxConfig): Promise<void>;
  info(): Promise<SandboxInfo>;
  destroy(): Promise<void>;
}
