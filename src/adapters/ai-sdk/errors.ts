/**
 * Errors in the AI SDK harness's own shape: every failure of the service reaches the harness as an
 * `EdgeSandboxError`, a `HarnessError` (so `HarnessError.isInstance` holds) carrying the service's
 * stable `code` and HTTP status; what this service does not offer is
 * `EdgeSandboxCapabilityUnsupportedError`, a `HarnessCapabilityUnsupportedError` with code
 * `NOT_SUPPORTED`; a refused token is the harness's `HarnessSandboxAuthenticationError`.
 */
import { HarnessCapabilityUnsupportedError, HarnessError, HarnessSandboxAuthenticationError } from "@ai-sdk/harness";
import { ERROR_CODES, type ErrorCode } from "../../../protocol/errors.ts";
import { SandboxError as ServiceError } from "../../client/index.ts";

export const PROVIDER_ID = "edge-sandbox";

export class EdgeSandboxError extends HarnessError {
  /** The service's error code (protocol/errors.ts), e.g. `PORT_NOT_EXPOSED`. */
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly context: Record<string, unknown> | undefined;

  constructor(options: { message: string; code: ErrorCode; context?: Record<string, unknown>; cause?: unknown }) {
    super({ message: options.message, cause: options.cause });
    Object.defineProperty(this, "name", { value: "EdgeSandboxError" });
    this.code = options.code;
    this.httpStatus = ERROR_CODES[options.code];
    this.context = options.context;
  }
}

export class EdgeSandboxCapabilityUnsupportedError extends HarnessCapabilityUnsupportedError {
  readonly code = "NOT_SUPPORTED" as const;
  readonly httpStatus = ERROR_CODES.NOT_SUPPORTED;

  constructor(message: string) {
    super({ message });
  }
}

const AUTH_CODES = new Set<ErrorCode>(["UNAUTHORIZED", "AUTH_NOT_CONFIGURED"]);

/** Any failure as the harness should see it: ours stay as they are, the service's become coded harness errors. */
export function harnessError(error: unknown): Error {
  if (HarnessError.isInstance(error)) return error;
  if (error instanceof ServiceError) {
    if (AUTH_CODES.has(error.code)) {
      return new HarnessSandboxAuthenticationError({ message: `The sandbox service refused the token: ${error.message}`, sandboxProviderId: PROVIDER_ID, cause: error });
    }
    return new EdgeSandboxError({ message: error.message, code: error.code, ...(error.context === undefined ? {} : { context: error.context }), cause: error });
  }
  if (error instanceof Error && error.name === "AbortError") return error;
  return new EdgeSandboxError({ message: error instanceof Error ? error.message : String(error), code: "INTERNAL_ERROR", cause: error });
}

/** Runs `work`, restating its failure with harnessError. */
export async function asHarness<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw harnessError(error);
  }
}

/** Whether a service failure has this code (for answers the contract makes null or false). */
export function hasCode(error: unknown, ...codes: ErrorCode[]): boolean {
  return error instanceof ServiceError && codes.includes(error.code);
}
