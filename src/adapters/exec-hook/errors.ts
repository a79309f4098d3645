/**
 * The three ways an exec-hook call fails, told apart by class (`instanceof`) or by `kind`: the
 * process exited non-zero (ExitError, with its exit code), it ran past its deadline (TimeoutError,
 * saying the deadline), or it could not be run or its result not obtained (TransportError).
 */

export type ExecHookErrorKind = "exit" | "timeout" | "transport";

export abstract class ExecHookError extends Error {
  abstract readonly kind: ExecHookErrorKind;
}

export class ExitError extends ExecHookError {
  readonly kind = "exit";
  readonly exitCode: number;
  /** The signal that ended the process, when one did (its exit code is then 128 + the signal's number). */
  readonly signal: string | undefined;

  constructor(exitCode: number, signal?: string) {
    super(signal === undefined ? `exit status ${exitCode}` : `killed by ${signal} (exit status ${exitCode})`);
    this.name = "ExitError";
    this.exitCode = exitCode;
    this.signal = signal;
  }
}

export class TimeoutError extends ExecHookError {
  readonly kind = "timeout";
  /** The deadline the process ran past, in milliseconds. */
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

export class TransportError extends ExecHookError {
  readonly kind = "transport";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportError";
  }
}
