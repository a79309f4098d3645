/**
 * Background processes: start, list, inspect, logs (buffered and streamed, resumable), stdin, kill,
 * kill-all, cleanup. `?generation=` ties a call to the container a process handle came from.
 */
import { Hono } from "hono";
import { startProcessRequestSchema, stdinRequestSchema } from "../../../protocol/process.ts";
import { errorResponse } from "../errors.ts";
import { generationQuery, killAllQuery, killQuery, listQuery, streamQuery } from "../schemas.ts";
import { resumeRequest, sseResponse } from "../sse.ts";
import { checkGrantedRun } from "../stream-grant.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody, queryParams } from "../validate.ts";

export const processRoutes = new Hono<ApiEnv>()
  .post("/processes", jsonBody(startProcessRequestSchema), async (c) => {
    const { command, ...options } = c.req.valid("json");
    return c.json({ process: await c.var.sandbox.startProcess(command, options) }, 201);
  })
  .get("/processes", queryParams(listQuery), async (c) => {
    return c.json({ processes: await c.var.sandbox.listProcesses(c.req.valid("query")) });
  })
  .delete("/processes", queryParams(killAllQuery), async (c) => {
    return c.json({ killed: await c.var.sandbox.killAllProcesses(c.req.valid("query")) });
  })
  .post("/processes/cleanup", async (c) => {
    return c.json({ cleaned: await c.var.sandbox.cleanupCompletedProcesses() });
  })
  .get("/processes/:pid", queryParams(generationQuery), async (c) => {
    const id = c.req.param("pid");
    const process = await c.var.sandbox.getProcess(id, c.req.valid("query"));
    if (!process) return errorResponse(c, "PROCESS_NOT_FOUND", `Process "${id}" not found`, { processId: id });
    return c.json({ process });
  })
  .delete("/processes/:pid", queryParams(killQuery), async (c) => {
    const { signal, generation } = c.req.valid("query");
    return c.json(await c.var.sandbox.killProcess(c.req.param("pid"), signal, { generation }));
  })
  .get("/processes/:pid/logs", queryParams(generationQuery), async (c) => {
    return c.json(await c.var.sandbox.getProcessLogs(c.req.param("pid"), c.req.valid("query")));
  })
  .get("/processes/:pid/logs/stream", queryParams(streamQuery), async (c) => {
    await checkGrantedRun(c, c.req.param("pid"));
    const options = resumeRequest(c.req.header("last-event-id"), c.req.valid("query"));
    return sseResponse(await c.var.sandbox.streamProcessLogs(c.req.param("pid"), options));
  })
  .post("/processes/:pid/stdin", queryParams(generationQuery), jsonBody(stdinRequestSchema), async (c) => {
    const id = c.req.param("pid");
    const body = c.req.valid("json");
    const ref = c.req.valid("query");
    if (!("data" in body)) return c.json(await c.var.sandbox.closeStdin(id, ref));
    const encoding = body.encoding === "base64" ? "base64" : "utf8";
    return c.json(await c.var.sandbox.writeStdin(id, body.data, { ...ref, encoding, ...(body.close ? { close: true } : {}) }));
  });
