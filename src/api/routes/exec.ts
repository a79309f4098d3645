/**
 * The exec routes the bindings cannot derive (src/rpc/bindings/processes.ts): POST /exec (buffered
 * ExecResult; with `stream: "url"`, started in the background with a signed URL of its event stream)
 * and GET /exec/:pid/stream, where a broken exec stream resumes from its Last-Event-ID (a signed
 * URL's grant checked first).
 */
import type { Context } from "hono";
import { Hono } from "hono";
import type { ExecEvent } from "../../../protocol/events.ts";
import { isErrorCode } from "../../../protocol/errors.ts";
import { readEventStream } from "../../../protocol/sse.ts";
import { processRunTag, type ExecStreamUrl } from "../../../protocol/stream-url.ts";
import { API_METHODS } from "../../rpc/bindings/index.ts";
import { SandboxError } from "../../rpc/errors.ts";
import type { ExecRequestOptions } from "../../rpc/processes.ts";
import type { ApiEnv } from "../types.ts";
import { resumeRequest, sseResponse } from "../sse.ts";
import { checkGrantedRun } from "../stream-grant.ts";
import { mintStreamUrl, streamTargets } from "../stream-url.ts";
import { jsonBody, queryParams } from "../validate.ts";

export const execRoutes = new Hono<ApiEnv>()
  .post(API_METHODS.exec.path, jsonBody(API_METHODS.exec.body), async (c) => {
    const { command, stream, ttlSeconds, ...options } = c.req.valid("json");
    if (stream === "url") return c.json(await startWithStreamUrl(c, command, options, ttlSeconds), 202);
    if (ttlSeconds !== undefined) throw new SandboxError('ttlSeconds is the life of a stream URL: it goes with stream: "url"', "INVALID_REQUEST");
    return c.json(await c.var.sandbox.exec(command, options));
  })
  .get(API_METHODS.resumeExecStream.path, queryParams(API_METHODS.resumeExecStream.query), async (c) => {
    await checkGrantedRun(c, c.req.param("pid"));
    const options = resumeRequest(c.req.header("last-event-id"), c.req.valid("query"));
    return sseResponse(await c.var.sandbox.resumeExecStream(c.req.param("pid"), options));
  });

/**
 * Starts the command as a streamed exec and lets go of its stream once it has started: the exec
 * then waits for a reader to come back, keeping its output, as it does for a client whose stream
 * broke, and the signed URL is that reader's way back in (from the first event).
 */
async function startWithStreamUrl(c: Context<ApiEnv>, command: string, options: ExecRequestOptions, ttlSeconds: number | undefined): Promise<ExecStreamUrl> {
  if (options.killOnDisconnect) throw new SandboxError('killOnDisconnect would kill the command as soon as it starts with stream: "url"', "INVALID_REQUEST");
  for await (const event of readEventStream<ExecEvent>(await c.var.sandbox.execStream(command, options))) {
    if (event.type === "start") {
      const process = await c.var.sandbox.getProcess(event.processId, {});
      const run = processRunTag(process ?? { startTime: event.timestamp, pid: event.pid });
      const url = await mintStreamUrl(c, streamTargets.execEvents(c.var.sandboxId, event.processId, run), ttlSeconds);
      return { processId: event.processId, ...(event.pid === undefined ? {} : { pid: event.pid }), ...url };
    }
    if (event.type === "error") throw new SandboxError(event.error, isErrorCode(event.code) ? event.code : "INTERNAL_ERROR");
  }
  throw new SandboxError("The exec stream ended before the command started", "INTERNAL_ERROR");
}
