/**
 * The exec-hook contract: a hook runtime spawns a subprocess, pipes a payload (usually JSON) to its
 * stdin and reads its stdout, and lets the user choose by mode name where that subprocess runs.
 * A sandbox answers one request with the bytes the process wrote and, when it failed, why.
 */
import type { ExitError, TimeoutError, TransportError } from "./errors.ts";

export interface ExecHookRequest {
  /** The program (looked up in PATH), run directly: no shell. */
  command: string;
  args?: string[];
  /** The process's environment as "KEY=value" entries. */
  env?: string[];
  /** Bytes piped to stdin, then EOF (none: EOF at once). */
  stdin?: Uint8Array;
  /** Time limit in milliseconds; 0 or negative: the sandbox's default. */
  timeoutMs?: number;
}

export interface ExecHookResponse {
  stdout: Uint8Array;
  stderr: Uint8Array;
  /** Why the call failed: the process exited non-zero, ran out of time, or could not be run or heard. */
  error?: ExitError | TimeoutError | TransportError;
}

export interface ExecHookSpawnOptions {
  /** Aborting kills the process and rejects the spawn with the signal's reason. */
  signal?: AbortSignal;
}

export interface ExecHookSandbox {
  /** The mode name this sandbox was made by. */
  name(): string;
  spawn(request: ExecHookRequest, options?: ExecHookSpawnOptions): Promise<ExecHookResponse>;
  /** Kills what this sandbox still runs; later spawns fail with a TransportError. */
  close?(): Promise<void>;
}

export type ExecHookFactory<Config = unknown> = (config: Config) => ExecHookSandbox;
