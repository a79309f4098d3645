// @ts-check
/**
 * Calls to the /v1 API with the pasted token. Errors keep the API's own `code` and message, so what
 * the console shows is what the service said. Streams a browser opens itself (EventSource,
 * WebSocket) cannot carry the token: for those the API mints signed URLs (`streamUrl`).
 */
import { storedToken } from "./token.js";

export class ApiError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {number} status
   */
  constructor(code, message, status) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/** @param {string} sandboxId @param {string} [rest] */
export function sandboxPath(sandboxId, rest = "") {
  return `/v1/sandboxes/${encodeURIComponent(sandboxId)}${rest}`;
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body] sent as JSON
 * @param {{ signal?: AbortSignal, headers?: Record<string, string> }} [options] a signal that abandons the call (and its body), more headers
 * @returns {Promise<Response>}
 */
export async function call(method, path, body, options = {}) {
  const headers = new Headers({ ...options.headers, authorization: `Bearer ${storedToken() ?? ""}` });
  if (body !== undefined) headers.set("content-type", "application/json");
  const response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), signal: options.signal ?? null });
  if (!response.ok) throw await errorOf(response);
  return response;
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>} the JSON answer (undefined for 204)
 */
export async function callJson(method, path, body) {
  const response = await call(method, path, body);
  return response.status === 204 ? undefined : response.json();
}

/** @param {Response} response */
export async function errorOf(response) {
  const text = await response.text();
  try {
    const body = JSON.parse(text);
    if (typeof body.code === "string") return new ApiError(body.code, body.message ?? text, response.status);
  } catch {
    // not one of our error bodies
  }
  return new ApiError(`HTTP_${response.status}`, text || response.statusText, response.status);
}
