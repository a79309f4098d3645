/**
 * Run a command to completion: buffered (`POST /api/execute` → ExecResult) or streamed
 * (`POST /api/execute/stream` → SSE of ExecEvent). Both reply only once the command has started,
 * so a command that cannot start is a 422 JSON error, never a half-open stream.
 *
 * A finished exec stays reachable by id for a short while (LIMITS.finishedExecRetentionMs): a client
 * whose stream broke resumes from `GET /api/process/{id}/stream` with its Last-Event-ID.
 *
 * The buffered body is the ExecResult (engine/exec.ts decides its `success`; HTTP 200 either way,
 * an error response is told apart by its `code`). The stream's `complete.result` has empty
 * stdout/stderr: every byte was already sent as an event.
 */
import { execRequestSchema } from "../../../protocol/process.ts";
import { execResultOf } from "../../engine/exec.ts";
import { LogReader } from "../../engine/log-reader.ts";
import { execSpec } from "../../engine/options.ts";
import { readJson } from "../request.ts";
import { sendJson } from "../response.ts";
import { streamLogAsSse } from "../sse.ts";
import { execFramer } from "../sse-frames.ts";
import type { RequestContext, RouteGroup } from "../types.ts";

async function execute(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, execRequestSchema);
  const record = await ctx.server.processes.launch(execSpec(request, ctx.server.limits, "buffered"));
  const onGone = () => {
    if (!ctx.res.writableEnded) record.kill("SIGTERM");
  };
  if (request.killOnDisconnect) ctx.res.once("close", onGone);
  await record.finished;
  ctx.res.off("close", onGone);
  try {
    if (!ctx.res.destroyed) sendJson(ctx.res, 200, execResultOf(record));
  } finally {
    // The record stays a while for late readers (status, log); the captured result need not.
    record.releaseCapture();
  }
}

async function executeStream(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, execRequestSchema);
  const record = await ctx.server.processes.launch(execSpec(request, ctx.server.limits, "stream"));
  // Pinned: the command runs at the reader's pace (like a pipe) instead of losing output.
  const reader = new LogReader(record.log, 0, { pin: true });
  try {
    const end = await streamLogAsSse(ctx, reader, execFramer(record));
    if (end === "disconnected" && request.killOnDisconnect) record.kill("SIGTERM");
  } finally {
    reader.unpin();
  }
}

export const execRoutes: RouteGroup = {
  name: "exec",
  routes: [
    { method: "POST", path: "/api/execute", handler: execute },
    { method: "POST", path: "/api/execute/stream", handler: executeStream },
  ],
};
