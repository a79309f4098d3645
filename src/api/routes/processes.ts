/**
 * The process routes the bindings cannot derive (src/rpc/bindings/processes.ts): a process that is
 * not there (the method's null, the route's 404), a log stream a signed URL may open, and stdin,
 * where one route writes or closes. `?generation=` ties a call to the container a handle came from.
 */
import { Hono } from "hono";
import { generationQuerySchema, stdinRequestSchema } from "../../../protocol/process.ts";
import { streamQuerySchema } from "../../../protocol/resume.ts";
import { API_METHODS } from "../../rpc/bindings/index.ts";
import { errorResponse } from "../errors.ts";
import { resumeRequest, sseResponse } from "../sse.ts";
import { checkGrantedRun } from "../stream-grant.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody, queryParams } from "../validate.ts";

export const processRoutes = new Hono<ApiEnv>()
  .get(API_METHODS.getProcess.path, queryParams(generationQuerySchema), async (c) => {
    const id = c.req.param("pid");
    const process = await c.var.sandbox.getProcess(id, c.req.valid("query"));
    if (!process) return errorResponse(c, "PROCESS_NOT_FOUND", `Process "${id}" not found`, { processId: id });
    return c.json({ process });
  })
  .get(API_METHODS.streamProcessLogs.path, queryParams(streamQuerySchema), async (c) => {
    await checkGrantedRun(c, c.req.param("pid"));
    const options = resumeRequest(c.req.header("last-event-id"), c.req.valid("query"));
    return sseResponse(await c.var.sandbox.streamProcessLogs(c.req.param("pid"), options));
  })
  .post(API_METHODS.writeStdin.path, queryParams(generationQuerySchema), jsonBody(stdinRequestSchema), async (c) => {
    const id = c.req.param("pid");
    const body = c.req.valid("json");
    const ref = c.req.valid("query");
    if (!("data" in body)) return c.json(await c.var.sandbox.closeStdin(id, ref));
    const encoding = body.encoding === "base64" ? "base64" : "utf8";
    return c.json(await c.var.sandbox.writeStdin(id, body.data, { ...ref, encoding, ...(body.close ? { close: true } : {}) }));
  });
