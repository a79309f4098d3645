/**
 * What an EdgeDeepAgentsSandbox is built from: where the sandbox is (HTTP or a Worker binding), the
 * files to put in it on initialize(), and the limits of `execute`.
 */
import type { SandboxConnection } from "../shared/connection.ts";

export type EdgeDeepAgentsSandboxOptions = SandboxConnection & {
  /** Files written by initialize(): path (relative to the workspace, or absolute) → content. */
  initialFiles?: Record<string, string | Uint8Array>;
  /** Time limit of `execute` in seconds unless the call gives one; 0 disables it. Default 30 minutes. */
  defaultTimeout?: number;
  /** Output `execute` keeps per command (UTF-8 bytes, stdout and stderr together); beyond it `truncated` is set. Default 8 MiB. */
  maxOutputBytes?: number;
};

export const DEFAULT_TIMEOUT_SECONDS = 30 * 60;
/** Enough for any listing or log an agent reads whole; bounded so a runaway command cannot exhaust a Worker's memory. */
export const DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024;
