/**
 * Files: JSON operations under /files/…, and the raw bytes of one file at /files/content (GET streams
 * it out, PUT streams the request body in), so large files pass through without being held whole.
 */
import { Hono } from "hono";
import {
  deleteFileRequestSchema,
  existsRequestSchema,
  listFilesRequestSchema,
  mkdirRequestSchema,
  moveFileRequestSchema,
  readFileRequestSchema,
  renameFileRequestSchema,
  streamWriteQuerySchema,
  writeFileRequestSchema,
} from "../../../protocol/files.ts";
import { fileStreamHeaders } from "../../rpc/file-headers.ts";
import { fileQuery } from "../schemas.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody, queryParams } from "../validate.ts";

const emptyBody = () => new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });

export const fileRoutes = new Hono<ApiEnv>()
  .post("/files/write", jsonBody(writeFileRequestSchema), async (c) => {
    const { path, content, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.writeFile(path, content, options));
  })
  .post("/files/read", jsonBody(readFileRequestSchema), async (c) => {
    const { path, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.readFile(path, options));
  })
  .get("/files/content", queryParams(fileQuery), async (c) => {
    const { stream, ...file } = await c.var.sandbox.readFileStream(c.req.valid("query").path);
    const contentType = file.isBinary ? file.mimeType : `${file.mimeType}; charset=utf-8`;
    return new Response(stream, { headers: fileStreamHeaders(file, contentType) });
  })
  .put("/files/content", queryParams(streamWriteQuerySchema), async (c) => {
    const { path, ...options } = c.req.valid("query");
    return c.json(await c.var.sandbox.writeFileStream(path, c.req.raw.body ?? emptyBody(), options));
  })
  .post("/files/mkdir", jsonBody(mkdirRequestSchema), async (c) => {
    const { path, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.mkdir(path, options));
  })
  .post("/files/delete", jsonBody(deleteFileRequestSchema), async (c) => {
    const { path, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.deleteFile(path, options));
  })
  .post("/files/rename", jsonBody(renameFileRequestSchema), async (c) => {
    const { oldPath, newPath, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.renameFile(oldPath, newPath, options));
  })
  .post("/files/move", jsonBody(moveFileRequestSchema), async (c) => {
    const { sourcePath, destinationPath, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.moveFile(sourcePath, destinationPath, options));
  })
  .post("/files/list", jsonBody(listFilesRequestSchema), async (c) => {
    const { path, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.listFiles(path, options));
  })
  .post("/files/exists", jsonBody(existsRequestSchema), async (c) => c.json(await c.var.sandbox.exists(c.req.valid("json").path)));
