/**
 * Commands and processes as they cross between a caller and the Sandbox Durable Object (Workers RPC)
 * or the Worker's /v1 API (HTTP): the options each call takes, and the records it returns. Records
 * are the container's responses without their envelope; the Durable Object adds only the container
 * generation a process lives in.
 */
import type { ResumePoint } from "../../protocol/resume.ts";
import type { CommandEnvVars } from "../../protocol/sessions.ts";
import type {
  ExecRequest,
  GetProcessLogsResponse,
  KillResponse,
  ProcessInfo,
  StdinResponse,
  WithoutEnvelope,
} from "../../protocol/process.ts";

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
  idempotencyKey?: string;
  /** false: the process does not keep the sandbox awake. */
  keepAlive?: boolean;
  sessionId?: string;
  /** Run from a clean state, outside every session (default: the default session). */
  isolated?: boolean;
  timeout?: number;
  timeoutMs?: number;
  /** null unsets a variable for this command. */
  env?: CommandEnvVars;
  cwd?: string;
  args?: string[];
  encoding?: "utf8" | "utf-8" | "base64";
  autoCleanup?: boolean;
  logRetentionBytes?: number;
}

export type ProcessLogs = WithoutEnvelope<GetProcessLogsResponse>;
export type KillResult = WithoutEnvelope<KillResponse>;
export type StdinResult = WithoutEnvelope<StdinResponse>;

export interface StdinOptions extends HandleRef {
  encoding?: "utf8" | "base64";
  /** Close stdin after writing. */
  close?: boolean;
}

/** Where a stream picks up (protocol/resume.ts): after an event id, from byte offsets per stream. */
export interface StreamResumeRequest extends HandleRef, ResumePoint {}

export interface ListRequest {
  sessionId?: string;
}

export interface KillAllRequest {
  sessionId?: string;
  signal?: string | number;
}
