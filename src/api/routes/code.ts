/**
 * The code interpreter: contexts (create, list, get, delete, restart), runs buffered (the Execution
 * as JSON, built from the run's stream so a caller that goes away interrupts its cell) and streamed (SSE of CodeEvent, resumable from Last-Event-ID), and interrupting a run.
 */
import { Hono } from "hono";
import { createCodeContextRequestSchema, runCodeRequestSchema } from "../../../protocol/code.ts";
import { runCodeBuffered } from "../code-run.ts";
import { streamQuery } from "../schemas.ts";
import { resumeRequest, sseResponse } from "../sse.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody, queryParams } from "../validate.ts";

export const codeRoutes = new Hono<ApiEnv>()
  .post("/code/contexts", jsonBody(createCodeContextRequestSchema), async (c) => {
    return c.json({ context: await c.var.sandbox.createCodeContext(c.req.valid("json")) }, 201);
  })
  .get("/code/contexts", async (c) => c.json({ contexts: await c.var.sandbox.listCodeContexts() }))
  .get("/code/contexts/:cid", async (c) => c.json({ context: await c.var.sandbox.getCodeContext(c.req.param("cid")) }))
  .delete("/code/contexts/:cid", async (c) => c.json(await c.var.sandbox.deleteCodeContext(c.req.param("cid"))))
  .post("/code/contexts/:cid/restart", async (c) => c.json({ context: await c.var.sandbox.restartCodeContext(c.req.param("cid")) }))
  .post("/code/run", jsonBody(runCodeRequestSchema), async (c) => {
    const { code, ...options } = c.req.valid("json");
    return runCodeBuffered(c.var.sandbox, code, options);
  })
  .post("/code/run/stream", jsonBody(runCodeRequestSchema), async (c) => {
    const { code, ...options } = c.req.valid("json");
    return sseResponse(await c.var.sandbox.runCodeStream(code, options));
  })
  .get("/code/executions/:eid/stream", queryParams(streamQuery), async (c) => {
    const options = resumeRequest(c.req.header("last-event-id"), c.req.valid("query"));
    return sseResponse(await c.var.sandbox.resumeCodeStream(c.req.param("eid"), options));
  })
  .post("/code/executions/:eid/interrupt", async (c) => c.json(await c.var.sandbox.interruptCode(c.req.param("eid"))));
