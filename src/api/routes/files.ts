/**
 * The raw bytes of one file at /files/content: GET streams it out (its facts in headers), PUT streams
 * the request body in, so large files pass through without being held whole. The JSON file
 * operations are derived from their bindings (src/rpc/bindings/files.ts).
 */
import { Hono } from "hono";
import { streamWriteQuerySchema } from "../../../protocol/files.ts";
import { API_METHODS } from "../../rpc/bindings/index.ts";
import { fileStreamHeaders } from "../../rpc/file-headers.ts";
import { fileQuery } from "../schemas.ts";
import type { ApiEnv } from "../types.ts";
import { withWholeBody } from "../upload-relay.ts";
import { queryParams } from "../validate.ts";

const emptyBody = () => new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });

export const fileRoutes = new Hono<ApiEnv>()
  .get(API_METHODS.readFileStream.path, queryParams(fileQuery), async (c) => {
    const { stream, ...file } = await c.var.sandbox.readFileStream(c.req.valid("query").path);
    const contentType = file.isBinary ? file.mimeType : `${file.mimeType}; charset=utf-8`;
    return new Response(stream, { headers: fileStreamHeaders(file, contentType) });
  })
  .put(API_METHODS.writeFileStream.path, queryParams(streamWriteQuerySchema), async (c) => {
    const { path, ...options } = c.req.valid("query");
    return c.json(await withWholeBody(c.req.raw.body ?? emptyBody(), (body) => c.var.sandbox.writeFileStream(path, body, options)));
  });
