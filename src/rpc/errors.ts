/**
 * Error classes users catch, one per wire code that callers act on, all carrying `code`,
 * `httpStatus` and `context`. The same errors reach the caller three ways: a JSON error body
 * (HTTP, error-response.ts), an SSE `error` event, or a Workers RPC exception (rpc-errors.ts); each
 * is rebuilt into its class here, from its wire code.
 */
import { ERROR_CODES, isErrorCode, type ErrorCode } from "../../protocol/errors.ts";
import type { ExecResult } from "../../protocol/process.ts";

export interface SandboxErrorOptions {
  context?: Record<string, unknown>;
  cause?: unknown;
}

export class SandboxError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly context: Record<string, unknown> | undefined;

  constructor(message: string, code: ErrorCode = "INTERNAL_ERROR", options: SandboxErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SandboxError";
    this.code = code;
    this.httpStatus = ERROR_CODES[code];
    this.context = options.context;
  }
}

export class ProcessNotFoundError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "PROCESS_NOT_FOUND", options);
    this.name = "ProcessNotFoundError";
  }
}

export class ProcessAlreadyExistsError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "PROCESS_EXISTS", options);
    this.name = "ProcessAlreadyExistsError";
  }
}

/**
 * Something ran out of its time limit. From an exec (buffered, streamed, or a run's handle) its
 * context is the result so far — the output up to the kill, exit code 124, the signal, duration and
 * ids — read through the fields below (the names of Cloudflare's CommandError and of ExecResult).
 * From a wait on the caller's side (waitForExit, waitForPort, waitForLog) there is no result.
 */
export class ExecutionTimeoutError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "EXECUTION_TIMEOUT", options);
    this.name = "ExecutionTimeoutError";
  }

  /** The exec's result up to its kill (`timedOut: true`, `success: false`), when an exec timed out. */
  get result(): ExecResult | undefined {
    const context = this.context;
    return context !== undefined && typeof context.exitCode === "number" && typeof context.command === "string" ? (context as ExecResult) : undefined;
  }
  get command(): string | undefined {
    return this.result?.command;
  }
  get stdout(): string | undefined {
    return this.result?.stdout;
  }
  get stderr(): string | undefined {
    return this.result?.stderr;
  }
  get exitCode(): number | undefined {
    return this.result?.exitCode;
  }
  get signal(): string | undefined {
    return this.result?.signal;
  }
  /** Milliseconds from spawn to the end of the killed process. */
  get duration(): number | undefined {
    return this.result?.duration;
  }
  get processId(): string | undefined {
    return this.result?.processId;
  }
}

/** A handle from before the container restarted: its process is gone, whatever now shares its id. */
export class StaleProcessHandleError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "STALE_PROCESS_HANDLE", options);
    this.name = "StaleProcessHandleError";
  }
}

export class ProcessNotRunningError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "PROCESS_NOT_RUNNING", options);
    this.name = "ProcessNotRunningError";
  }
}

/** The container could not be started or reached (locally: the container runtime is not running). */
export class ContainerUnavailableError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "CONTAINER_UNAVAILABLE", options);
    this.name = "ContainerUnavailableError";
  }
}

export class SessionNotFoundError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "SESSION_NOT_FOUND", options);
    this.name = "SessionNotFoundError";
  }
}

export class SessionAlreadyExistsError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "SESSION_EXISTS", options);
    this.name = "SessionAlreadyExistsError";
  }
}

export class FileNotFoundError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "FILE_NOT_FOUND", options);
    this.name = "FileNotFoundError";
  }
}

/** A path that leads out of what the sandbox may touch (`..`, absolute paths elsewhere, symlinks out). */
export class PathOutsideWorkspaceError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "PATH_OUTSIDE_WORKSPACE", options);
    this.name = "PathOutsideWorkspaceError";
  }
}

/** The sandbox asked for an isolation the machine does not offer: never silently run without it. */
export class IsolationUnavailableError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "ISOLATION_UNAVAILABLE", options);
    this.name = "IsolationUnavailableError";
  }
}

/** A code context id the sandbox does not know: never made, deleted, or gone with a restarted container. */
export class CodeContextNotFoundError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "CODE_CONTEXT_NOT_FOUND", options);
    this.name = "CodeContextNotFoundError";
  }
}

/** The context was running a cell and the run asked not to wait (`wait: false`). */
export class CodeContextBusyError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "CODE_CONTEXT_BUSY", options);
    this.name = "CodeContextBusyError";
  }
}

/** The HTTP client could not reach the service, or lost a stream and ran out of reconnects. */
export class SandboxConnectionError extends SandboxError {
  constructor(message: string, options?: SandboxErrorOptions) {
    super(message, "CONNECTION_FAILED", options);
    this.name = "SandboxConnectionError";
  }
}

export class SandboxAuthError extends SandboxError {
  constructor(message: string, code: "UNAUTHORIZED" | "AUTH_NOT_CONFIGURED", options?: SandboxErrorOptions) {
    super(message, code, options);
    this.name = "SandboxAuthError";
  }
}

export class InvalidRequestError extends SandboxError {
  constructor(message: string, code: ErrorCode, options?: SandboxErrorOptions) {
    super(message, code, options);
    this.name = "InvalidRequestError";
  }
}

const INVALID_CODES = new Set<ErrorCode>([
  "INVALID_JSON",
  "INVALID_REQUEST",
  "INVALID_SIGNAL",
  "INVALID_SANDBOX_ID",
  "INVALID_PORT",
  "PAYLOAD_TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
]);

/** Builds the error class for a wire code. Unknown codes become a plain SandboxError(INTERNAL_ERROR). */
export function errorFromCode(code: string, message: string, options: SandboxErrorOptions = {}): SandboxError {
  if (!isErrorCode(code)) {
    return new SandboxError(message, "INTERNAL_ERROR", { ...options, context: { ...options.context, code } });
  }
  switch (code) {
    case "PROCESS_NOT_FOUND":
      return new ProcessNotFoundError(message, options);
    case "PROCESS_EXISTS":
      return new ProcessAlreadyExistsError(message, options);
    case "EXECUTION_TIMEOUT":
      return new ExecutionTimeoutError(message, options);
    case "STALE_PROCESS_HANDLE":
      return new StaleProcessHandleError(message, options);
    case "PROCESS_NOT_RUNNING":
      return new ProcessNotRunningError(message, options);
    case "CONTAINER_UNAVAILABLE":
      return new ContainerUnavailableError(message, options);
    case "SESSION_NOT_FOUND":
      return new SessionNotFoundError(message, options);
    case "SESSION_EXISTS":
      return new SessionAlreadyExistsError(message, options);
    case "FILE_NOT_FOUND":
      return new FileNotFoundError(message, options);
    case "PATH_OUTSIDE_WORKSPACE":
      return new PathOutsideWorkspaceError(message, options);
    case "ISOLATION_UNAVAILABLE":
      return new IsolationUnavailableError(message, options);
    case "CODE_CONTEXT_NOT_FOUND":
      return new CodeContextNotFoundError(message, options);
    case "CODE_CONTEXT_BUSY":
      return new CodeContextBusyError(message, options);
    case "CONNECTION_FAILED":
      return new SandboxConnectionError(message, options);
    case "UNAUTHORIZED":
    case "AUTH_NOT_CONFIGURED":
      return new SandboxAuthError(message, code, options);
    default:
      return INVALID_CODES.has(code) ? new InvalidRequestError(message, code, options) : new SandboxError(message, code, options);
  }
}

/**
 * The error an exec stream's `error` event stands for. A timed-out exec's event carries its result
 * without output (that came as events): the reader puts back what it collected.
 */
export function execEventError(
  event: { error: string; code?: string | undefined; result?: ExecResult | undefined },
  output?: { stdout: string; stderr: string },
): SandboxError {
  const result = event.result === undefined ? undefined : { ...event.result, stdout: event.result.stdout || (output?.stdout ?? ""), stderr: event.result.stderr || (output?.stderr ?? "") };
  return errorFromCode(event.code ?? "INTERNAL_ERROR", event.error, result === undefined ? {} : { context: result });
}

/**
 * What a full disk says, from the Durable Object's storage (SQLite) or a file system: a disk shared
 * with the sandboxes that one of them filled is that, not a fault of the service.
 */
const DISK_FULL = /\bSQLITE_FULL\b|database or disk is full|\bENOSPC\b|no space left on device|\bEDQUOT\b/i;

/** Any thrown value as a SandboxError (a full disk becomes INSUFFICIENT_STORAGE, other unknown failures INTERNAL_ERROR, keeping the cause). */
export function asSandboxError(error: unknown): SandboxError {
  if (error instanceof SandboxError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (DISK_FULL.test(message)) return errorFromCode("INSUFFICIENT_STORAGE", `the service's disk is full: ${message}`, { cause: error });
  return new SandboxError(message, "INTERNAL_ERROR", { cause: error });
}
