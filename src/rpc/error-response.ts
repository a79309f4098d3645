/**
 * Reading a failed HTTP response: the protocol ErrorResponse it carries, or else its status and
 * text. The HTTP client (from the Worker's /v1 API), the Durable Object (from the container server)
 * and its channel to the local runtime (from the runtime's API) all read their errors here.
 */
import { isErrorResponse, type ErrorCode, type ErrorResponse } from "../../protocol/errors.ts";
import { errorFromCode, type SandboxError } from "./errors.ts";

/** The body of a failed response: the ErrorResponse it carries, or its text when it carries none. */
export async function readErrorBody(response: Response): Promise<ErrorResponse | string> {
  const text = await response.text();
  try {
    const body: unknown = JSON.parse(text);
    if (isErrorResponse(body)) return body;
  } catch {
    // not JSON: the text is all there is
  }
  return text;
}

/** The SandboxError a failed response stands for. */
export async function errorFromResponse(response: Response): Promise<SandboxError> {
  return errorFromBody(await readErrorBody(response), response.status);
}

/** Rebuilds the error of an HTTP error response body (protocol `ErrorResponse`). */
export function errorFromBody(body: unknown, fallbackStatus: number): SandboxError {
  if (isErrorResponse(body)) {
    return errorFromCode(body.code, body.message, body.context === undefined ? {} : { context: body.context });
  }
  const code: ErrorCode = fallbackStatus === 401 ? "UNAUTHORIZED" : fallbackStatus === 404 ? "NOT_FOUND" : "INTERNAL_ERROR";
  const text = typeof body === "string" ? body.slice(0, 500) : JSON.stringify(body)?.slice(0, 500);
  return errorFromCode(code, `HTTP ${fallbackStatus}: ${text ?? ""}`);
}
