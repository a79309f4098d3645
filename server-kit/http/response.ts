/**
 * JSON responses: `sendJson` as given, `sendOk` with the success envelope (`success: true` and a
 * timestamp), and errors as protocol `errorBody` with the status their code fixes.
 */
import type { ServerResponse } from "node:http";
import { errorBody, type ErrorCode } from "../../protocol/errors.ts";
import { isServiceError } from "../service-error.ts";

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** 200 with the success envelope around `body`. */
export function sendOk(res: ServerResponse, body: object): void {
  sendJson(res, 200, { success: true, timestamp: new Date().toISOString(), ...body });
}

export function sendErrorCode(
  res: ServerResponse,
  code: ErrorCode,
  message: string,
  context?: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  const body = errorBody(code, message, context);
  sendJson(res, body.httpStatus, body, headers);
}

/** Any thrown value → an error response (unexpected ones as INTERNAL_ERROR), if headers can still be sent. */
export function sendError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (isServiceError(error)) {
    // A body left unread is drained or its connection closed afterwards (unread-body.ts).
    sendErrorCode(res, error.code, error.message, error.context);
    return;
  }
  sendErrorCode(res, "INTERNAL_ERROR", (error as Error)?.message ?? "internal error");
}
