/**
 * Request body limits. JSON bodies are capped at LIMITS.maxRequestBodyBytes (Hono's bodyLimit, which
 * reads a body without a length into memory to count it). A raw file upload is not: it streams on to
 * the container as it arrives, so only its declared length is checked here, against the streamed-file
 * cap; the container counts the bytes of uploads without a length and refuses what is too large.
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { FILE_LIMITS } from "../../protocol/files.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { errorResponse } from "./errors.ts";
import type { ApiEnv } from "./types.ts";

const STREAMED_UPLOAD = /^\/v1\/sandboxes\/[^/]+\/(files\/content|archive)\/?$/;

/** `streamedUpload`: the paths whose PUT (or POST) body is a raw upload (default: /v1's `files/content` and `archive`). */
export function bodyLimits(streamedUpload: RegExp = STREAMED_UPLOAD): MiddlewareHandler<ApiEnv> {
  const json = bodyLimit({
    maxSize: LIMITS.maxRequestBodyBytes,
    onError: (c) => errorResponse(c, "PAYLOAD_TOO_LARGE", `Request bodies are limited to ${LIMITS.maxRequestBodyBytes} bytes`),
  });
  return async (c, next) => {
    if ((c.req.method !== "PUT" && c.req.method !== "POST") || !streamedUpload.test(c.req.path)) return json(c, next);
    const declared = Number(c.req.header("content-length"));
    if (Number.isFinite(declared) && declared > FILE_LIMITS.maxStreamedFileBytes) {
      return errorResponse(c, "PAYLOAD_TOO_LARGE", `Uploads are limited to ${FILE_LIMITS.maxStreamedFileBytes} bytes`, {
        maxBytes: FILE_LIMITS.maxStreamedFileBytes,
      });
    }
    await next();
  };
}
