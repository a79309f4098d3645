/** The workspace as a tar stream, out and in, streamed both ways: raw bytes, which the bindings (src/rpc/bindings/backups.ts) leave to this file. */
import { Hono } from "hono";
import { ARCHIVE_MEDIA_TYPE, createArchiveRequestSchema, TAR_MEDIA_TYPE } from "../../../protocol/archive.ts";
import { API_METHODS } from "../../rpc/bindings/index.ts";
import { InvalidRequestError } from "../../rpc/errors.ts";
import type { ApiEnv } from "../types.ts";
import { withWholeBody } from "../upload-relay.ts";
import { jsonBody } from "../validate.ts";

export const archiveRoutes = new Hono<ApiEnv>()
  .post(API_METHODS.exportArchive.path, jsonBody(createArchiveRequestSchema), async (c) => {
    const request = c.req.valid("json");
    const stream = await c.var.sandbox.exportArchive(request);
    return new Response(stream, { headers: { "content-type": request.format === "tar" ? TAR_MEDIA_TYPE : ARCHIVE_MEDIA_TYPE, "cache-control": "no-store" } });
  })
  .put(API_METHODS.importArchive.path, async (c) => {
    if (!c.req.raw.body) throw new InvalidRequestError(`PUT ${API_METHODS.importArchive.path} needs a tar or tar.gz body`, "INVALID_REQUEST");
    const dir = c.req.query("dir");
    return c.json(await withWholeBody(c.req.raw.body, (body) => c.var.sandbox.importArchive(body, dir === undefined ? {} : { dir })));
  });
