/** JSON error responses with wire codes, for everything the API can fail with. */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { errorBody, type ErrorCode } from "../../protocol/errors.ts";
import { SandboxError } from "../rpc/errors.ts";
import { fromRpcError } from "../rpc/rpc-errors.ts";

export function errorResponse(c: Context, code: ErrorCode, message: string, context?: Record<string, unknown>): Response {
  const body = errorBody(code, message, context);
  return c.json(body, body.httpStatus as ContentfulStatusCode);
}

/** app.onError: SandboxErrors keep their code; Hono's own exceptions and anything else are mapped. */
export function handleError(error: unknown, c: Context): Response {
  if (error instanceof HTTPException) {
    if (error.status === 400 && /JSON/i.test(error.message)) return errorResponse(c, "INVALID_JSON", error.message);
    const response = error.getResponse();
    if (response.headers.get("content-type")?.includes("application/json")) return response;
    return errorResponse(c, statusCode(error.status), error.message || response.statusText);
  }
  const sandboxError = error instanceof SandboxError ? error : fromRpcError(error);
  if (sandboxError.code === "INTERNAL_ERROR") console.error("sandbox api:", error);
  return errorResponse(c, sandboxError.code, sandboxError.message, sandboxError.context);
}

function statusCode(status: number): ErrorCode {
  switch (status) {
    case 401:
      return "UNAUTHORIZED";
    case 404:
      return "NOT_FOUND";
    case 405:
      return "METHOD_NOT_ALLOWED";
    case 413:
      return "PAYLOAD_TOO_LARGE";
    case 415:
      return "UNSUPPORTED_MEDIA_TYPE";
    default:
      return status >= 500 ? "INTERNAL_ERROR" : "INVALID_REQUEST";
  }
}
