/**
 * Errors as Cloudflare's Bridge API answers them: `{error, code}` with its lower-case codes. Our
 * routes, validators and auth decide every error in our shape (code, message, status from
 * protocol/errors.ts); this middleware only restates it for Bridge clients, keeping the status.
 */
import type { MiddlewareHandler } from "hono";
import { isErrorResponse, type ErrorCode } from "../../../protocol/errors.ts";
import type { ApiEnv } from "../types.ts";

/** The Bridge's names where it has one for our code; elsewhere our code in lower case. */
const BRIDGE_CODES: Partial<Record<ErrorCode, string>> = {
  UNAUTHORIZED: "unauthorized",
  INVALID_JSON: "invalid_request",
  INVALID_REQUEST: "invalid_request",
  INVALID_SANDBOX_ID: "invalid_request",
  PATH_OUTSIDE_WORKSPACE: "invalid_request",
  FILE_NOT_FOUND: "workspace_read_not_found",
  PAYLOAD_TOO_LARGE: "payload_too_large",
  INVALID_PORT: "invalid_request",
  NOT_SUPPORTED: "not_implemented",
};

export function bridgeCode(code: ErrorCode): string {
  return BRIDGE_CODES[code] ?? code.toLowerCase();
}

/** A Bridge error body. */
export function bridgeError(status: number, code: string, error: string): Response {
  return Response.json({ error, code }, { status });
}

/** Restates an error response of ours (whoever made it: route, validator, auth) in the Bridge's shape. */
export function bridgeErrors(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    await next();
    if (c.res.ok || !c.res.headers.get("content-type")?.includes("application/json")) return;
    const body: unknown = await c.res.clone().json().catch(() => undefined);
    if (!isErrorResponse(body)) return;
    c.res = bridgeError(c.res.status, bridgeCode(body.code), body.message);
  };
}
