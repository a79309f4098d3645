/**
 * POST /exec (buffered ExecResult), POST /exec/stream (SSE of ExecEvent), and GET /exec/:pid/stream,
 * where a broken exec stream resumes from its Last-Event-ID.
 */
import { Hono } from "hono";
import { execRequestSchema } from "../../../protocol/process.ts";
import type { ApiEnv } from "../types.ts";
import { streamQuery } from "../schemas.ts";
import { resumeRequest, sseResponse } from "../sse.ts";
import { jsonBody, queryParams } from "../validate.ts";

export const execRoutes = new Hono<ApiEnv>()
  .post("/exec", jsonBody(execRequestSchema), async (c) => {
    const { command, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.exec(command, options));
  })
  .post("/exec/stream", jsonBody(execRequestSchema), async (c) => {
    const { command, ...options } = c.req.valid("json");
    return sseResponse(await c.var.sandbox.execStream(command, options));
  })
  .get("/exec/:pid/stream", queryParams(streamQuery), async (c) => {
    const options = resumeRequest(c.req.header("last-event-id"), c.req.valid("query"));
    return sseResponse(await c.var.sandbox.resumeExecStream(c.req.param("pid"), options));
  });
