/**
 * POST /files/watch (SSE of WatchEvent: `watching`, then changes, until the caller goes away) and
 * POST /files/changes (whether a tree changed since a version).
 */
import { Hono } from "hono";
import { changesRequestSchema, watchRequestSchema } from "../../../protocol/watch.ts";
import { sseResponse } from "../sse.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const watchRoutes = new Hono<ApiEnv>()
  .post("/files/watch", jsonBody(watchRequestSchema), async (c) => {
    const { path, ...options } = c.req.valid("json");
    return sseResponse(await c.var.sandbox.watch(path, options));
  })
  .post("/files/changes", jsonBody(changesRequestSchema), async (c) => {
    const { path, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.checkChanges(path, options));
  });
