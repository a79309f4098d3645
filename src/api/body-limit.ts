/**
 * Request body limits. JSON bodies are capped at LIMITS.maxRequestBodyBytes: one declaring more is
 * refused on its length (Hono's bodyLimit); one without a length is read into memory as far as the
 * limit, and past it read on and thrown away, so the 413 reaches a client that is still sending (a
 * connection closed under its upload would reset and lose the answer). That reading on is bounded
 * too: past as much again, the body is cancelled and the 413 goes at once, so an endless upload
 * holds the Worker no longer than a whole one. A raw file upload
 * is not read here: it streams on to the container as it arrives, so only its declared length is
 * checked, against the streamed-file cap; the container counts the bytes of uploads without a length
 * and refuses what is too large.
 *
 * A body refused on its declared length is cancelled before the answer goes: nothing of it will be
 * read, and whatever sits in front of the Worker may answer at once instead of taking the body in
 * first (wrangler's dev server drains every body the Worker left untouched before it answers, which
 * for a declared 50 GB would hold the 413 until all of it was sent).
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { FILE_LIMITS } from "../../protocol/files.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { errorResponse } from "./errors.ts";
import type { ApiEnv } from "./types.ts";

/** Refuses the request's body on its declared length, unread: cancelled, so no one drains it, then the 413. */
function refuseUnread(c: Context<ApiEnv>, message: string, context?: Record<string, unknown>): Response {
  c.req.raw.body?.cancel().catch(() => undefined);
  return errorResponse(c, "PAYLOAD_TOO_LARGE", message, context);
}

/**
 * A body without a length, read as far as `max`: its bytes, or undefined once it is over. The rest is
 * read to its end and dropped, or, past `max` more, cancelled.
 */
async function readWithin(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | undefined> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      chunks.length = 0;
      for (let dropped = 0; dropped <= max; ) {
        const next = await reader.read();
        if (next.done) return undefined;
        dropped += next.value.byteLength;
      }
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

const STREAMED_UPLOAD = /^\/v1\/sandboxes\/[^/]+\/(files\/content|archive)\/?$/;

/** `streamedUpload`: the paths whose PUT (or POST) body is a raw upload (default: /v1's `files/content` and `archive`). */
export function bodyLimits(streamedUpload: RegExp = STREAMED_UPLOAD): MiddlewareHandler<ApiEnv> {
  const json = bodyLimit({
    maxSize: LIMITS.maxRequestBodyBytes,
    onError: (c) => refuseUnread(c, `Request bodies are limited to ${LIMITS.maxRequestBodyBytes} bytes`),
  });
  return async (c, next) => {
    if ((c.req.method !== "PUT" && c.req.method !== "POST") || !streamedUpload.test(c.req.path)) {
      const raw = c.req.raw;
      if (raw.body === null || (raw.headers.has("content-length") && !raw.headers.has("transfer-encoding"))) return json(c, next);
      const bytes = await readWithin(raw.body, LIMITS.maxRequestBodyBytes);
      if (bytes === undefined) return errorResponse(c, "PAYLOAD_TOO_LARGE", `Request bodies are limited to ${LIMITS.maxRequestBodyBytes} bytes`);
      c.req.raw = new Request(raw, { body: bytes });
      return next();
    }
    const declared = Number(c.req.header("content-length"));
    if (Number.isFinite(declared) && declared > FILE_LIMITS.maxStreamedFileBytes) {
      return refuseUnread(c, `Uploads are limited to ${FILE_LIMITS.maxStreamedFileBytes} bytes`, {
        maxBytes: FILE_LIMITS.maxStreamedFileBytes,
      });
    }
    await next();
  };
}
