/**
 * The one error type the Node servers (the container server, the local runtime) throw on purpose.
 * It carries a protocol error code (which fixes the HTTP status) and optional context; the HTTP kit
 * turns it into `errorBody(...)`.
 */
import type { ErrorCode } from "../protocol/errors.ts";

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly context: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, context?: Record<string, unknown>) {
    super(message);
    this.name = "ServiceError";
    this.code = code;
    this.context = context;
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}
