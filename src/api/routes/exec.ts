/** POST /exec (buffered ExecResult) and POST /exec/stream (SSE of ExecEvent). */
import { Hono } from "hono";
import { execRequestSchema } from "../../../protocol/process.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";
import { sseResponse } from "../sse.ts";

export const execRoutes = new Hono<ApiEnv>()
  .post("/exec", jsonBody(execRequestSchema), async (c) => {
    const { command, ...options } = c.req.valid("json");
    return c.json(await c.var.sandbox.exec(command, options));
  })
  .post("/exec/stream", jsonBody(execRequestSchema), async (c) => {
    const { command, ...options } = c.req.valid("json");
    return sseResponse(await c.var.sandbox.execStream(command, options));
  });
