/**
 * Errors in the words of Cloudflare's Sandbox SDK. Their client rebuilds a typed error from a
 * response's `code` (SessionAlreadyExistsError from SESSION_ALREADY_EXISTS, FileNotFoundError, …), so
 * the routes that serve their API name our codes the way theirs does. The HTTP status stays the one
 * our error table gives; codes both APIs share pass unchanged.
 */
import type { ServerResponse } from "node:http";
import { errorBody, type ErrorCode } from "../../../../protocol/errors.ts";
import { sendJson } from "../../../../server-kit/http/response.ts";
import { isServiceError } from "../../../../server-kit/service-error.ts";
import type { Route } from "../../types.ts";

const THEIR_CODES: Partial<Record<ErrorCode, string>> = {
  SESSION_EXISTS: "SESSION_ALREADY_EXISTS",
  IS_A_DIRECTORY: "IS_DIRECTORY",
  NOT_A_DIRECTORY: "NOT_DIRECTORY",
  DIRECTORY_NOT_EMPTY: "FILESYSTEM_ERROR",
  INVALID_JSON: "VALIDATION_FAILED",
  INVALID_REQUEST: "VALIDATION_FAILED",
  PATH_OUTSIDE_WORKSPACE: "PERMISSION_DENIED",
  PAYLOAD_TOO_LARGE: "FILE_TOO_LARGE",
  CODE_CONTEXT_NOT_FOUND: "CONTEXT_NOT_FOUND",
  GIT_CLONE_TIMEOUT: "GIT_CLONE_FAILED",
  INVALID_ARCHIVE: "BACKUP_RESTORE_FAILED",
  BACKUP_FAILED: "BACKUP_CREATE_FAILED",
  ARCHIVE_SOURCE_CHANGED: "BACKUP_CREATE_FAILED",
};

/** Our error response, with Cloudflare's name for its code where theirs differs. */
function sendTheirError(res: ServerResponse, code: ErrorCode, message: string, context: Record<string, unknown> | undefined): void {
  const body = errorBody(code, message, context);
  sendJson(res, body.httpStatus, { ...body, code: THEIR_CODES[code] ?? code });
}

/** A route of Cloudflare's API: what its handler throws is answered with their codes. */
export function cloudflareRoute(method: Route["method"], path: string, handler: Route["handler"]): Route {
  return {
    method,
    path,
    handler: async (ctx) => {
      try {
        await handler(ctx);
      } catch (error) {
        if (!isServiceError(error) || ctx.res.headersSent) throw error;
        sendTheirError(ctx.res, error.code, error.message, error.context);
      }
    },
  };
}
