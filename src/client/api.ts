/**
 * The public API of a sandbox, as getSandbox() (Workers) and getHttpSandbox() (anywhere) return it:
 * the seed ISandbox surface with typed options. AbortSignals and callbacks live on the caller's side.
 */
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import type { ExecResult, ProcessStatus } from "../../protocol/process.ts";
import type { ProcessLogs, SandboxConfig, SandboxInfo, StdinResult } from "./types.ts";

export type OutputCallback = (stream: "stdout" | "stderr", data: string) => void;

export interface BaseExecOptions {
  sessionId?: string;
  /** Time limit in milliseconds; the process is killed when it runs out (result `timedOut: true`). */
  timeout?: number;
  env?: Record<string, string>;
  cwd?: string;
  /** "base64" returns raw output bytes base64-encoded. */
  encoding?: "utf8" | "base64";
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
  /** Per-stream cap on the buffered result. */
  maxOutputBytes?: number;
  processId?: string;
  args?: string[];
}

export interface ExecStreamOptions extends BaseExecOptions {
  /** Aborting kills the command and ends the iteration with the signal's reason. */
  signal?: AbortSignal;
  /** Kill the command when the reader stops early (`break`); default false: it runs on. */
  killOnDisconnect?: boolean;
  stdin?: string;
  processId?: string;
  args?: string[];
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

export interface ISandbox {
  readonly id: string;
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  execStream(command: string, options?: ExecStreamOptions): AsyncIterable<ExecEvent>;
  startProcess(command: string, options?: ProcessOptions): Promise<Process>;
  listProcesses(options?: { sessionId?: string }): Promise<Process[]>;
  getProcess(id: string): Promise<Process | null>;
  killProcess(id: string, signal?: string | number): Promise<void>;
  killAllProcesses(options?: { sessionId?: string; signal?: string | number }): Promise<number>;
  streamProcessLogs(processId: string, options?: LogStreamOptions): AsyncIterable<LogEvent>;
  getProcessLogs(id: string): Promise<ProcessLogs>;
  cleanupCompletedProcesses(): Promise<number>;
  writeStdin(processId: string, data: string, options?: { encoding?: "utf8" | "base64"; close?: boolean }): Promise<StdinResult>;
  closeStdin(processId: string): Promise<StdinResult>;
  /** Sandbox-wide settings (sleepAfter, envVars), kept by the sandbox. */
  configure(config: SandboxConfig): Promise<void>;
  info(): Promise<SandboxInfo>;
  /** Stops the container now (SIGKILL); the next call starts a fresh one. */
  destroy(): Promise<void>;
}
