/**
 * Run a command to completion: buffered (`POST /api/execute` → ExecResult) or streamed
 * (`POST /api/execute/stream` → SSE of ExecEvent). Both reply only once the command has started,
 * so a command that cannot start is a 422 JSON error, never a half-open stream.
 *
 * A client whose exec stream broke resumes it from `GET /api/execute/{id}/stream` with its
 * Last-Event-ID (or `?since=`): the same exec events from there on, ending with `complete` and the
 * result, or `error`. A finished exec stays reachable by id for a short while
 * (LIMITS.finishedExecRetentionMs) so a resume after the command ended still gets its end.
 *
 * The buffered body is the ExecResult (engine/exec.ts decides its `success`; HTTP 200 either way,
 * an error response is told apart by its `code`). The stream's `complete.result` has empty
 * stdout/stderr: every byte was already sent as an event.
 */
import { execRequestSchema } from "../../../protocol/process.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { execResultOf } from "../../engine/exec.ts";
import { LogReader } from "../../engine/log-reader.ts";
import type { ManagedProcess } from "../../engine/managed-process.ts";
import { execSpec } from "../../engine/options.ts";
import { readJson } from "../request.ts";
import { sendJson } from "../../../server-kit/http/response.ts";
import { streamLogAsSse } from "../sse.ts";
import { execFramer } from "../sse-frames.ts";
import type { RequestContext, RouteGroup } from "../types.ts";
import { resumePoint } from "./process.ts";

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
  await streamExecEvents(ctx, record, 0);
}

/** The exec events of a running or recently finished exec after the resume point. */
async function resumeStream(ctx: RequestContext): Promise<void> {
  const record = ctx.server.processes.get(ctx.params.id!);
  if (record.spec.kind !== "exec") {
    throw new ServiceError("PROCESS_NOT_FOUND", `${record.id} is a background process, not an exec: follow it at /api/process/${record.id}/stream`, {
      processId: record.id,
    });
  }
  const since = resumePoint(ctx);
  record.flushOutput();
  await streamExecEvents(ctx, record, since);
}

/**
 * Streams an exec's log as exec events. The reader is pinned: the command runs at the reader's pace
 * (like a pipe) instead of losing output. A reader that goes away takes the command with it only
 * when the exec asked for that (`killOnDisconnect`).
 */
async function streamExecEvents(ctx: RequestContext, record: ManagedProcess, since: number): Promise<void> {
  const reader = new LogReader(record.log, since, { pin: true });
  try {
    const end = await streamLogAsSse(ctx, reader, execFramer(record));
    if (end === "disconnected" && record.spec.killOnDisconnect) record.kill("SIGTERM");
  } finally {
    reader.unpin();
  }
}

export const execRoutes: RouteGroup = {
  name: "exec",
  routes: [
    { method: "POST", path: "/api/execute", handler: execute },
    { method: "POST", path: "/api/execute/stream", handler: executeStream },
    { method: "GET", path: "/api/execute/:id/stream", handler: resumeStream },
  ],
};
