/**
 * Run a command to completion: buffered (`POST /api/execute` → ExecResult) or streamed
 * (`POST /api/execute/stream` → SSE of ExecEvent). Both reply only once the command has started,
 * so a command that cannot start is a 422 JSON error, never a half-open stream.
 *
 * A client whose exec stream broke resumes it from `GET /api/execute/{id}/stream` with its
 * Last-Event-ID (or `?since=`) and the byte offsets it has of each stream (protocol/resume.ts): the
 * same exec events from there on, ending with `complete` and the result, or `error`. Until it
 * comes back the exec waits for it (engine/exec-readers.ts). A finished exec stays reachable by id
 * for a short while (LIMITS.finishedExecRetentionMs) so a resume after the command ended still gets
 * its end.
 *
 * An exec named by an idempotency key or the caller's process id runs at most once: a retry of the
 * same request (its answer was lost) attaches to the first run — the buffered route answers with
 * its result once it ends, the streamed one streams its events from the retry's resume point
 * (from the start without one).
 *
 * The buffered body is the ExecResult (engine/exec.ts decides its `success`; HTTP 200 either way,
 * an error response is told apart by its `code`). The stream's `complete.result` has empty
 * stdout/stderr: every byte was already sent as an event.
 *
 * An exec that ran out of its time limit answers EXECUTION_TIMEOUT instead (engine/exec.ts decides
 * it): the buffered route as an error response whose context is the result so far, the stream as its
 * last event, an `error` with that code and `result`. Cloudflare's own container fails such an exec
 * too (an error response, no result), so their client rejects here as it does there.
 */
import { EXEC_ROUTES, execRequestSchema, PROCESS_ROUTES } from "../../../protocol/process.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { execResultOf, execTimeoutOf } from "../../engine/exec.ts";
import { readerStart } from "../../engine/log-reader.ts";
import type { ResumePoint } from "../../../protocol/resume.ts";
import type { ManagedProcess } from "../../engine/managed-process.ts";
import { execSpec } from "../../engine/options.ts";
import { readJson, readResumePoint } from "../request.ts";
import { sendJson } from "../../../server-kit/http/response.ts";
import { streamLogAsSse, type StreamEnd } from "../streams/sse.ts";
import { execFramer } from "../streams/sse-frames.ts";
import type { RequestContext, RouteGroup } from "../types.ts";
import { acceptingTheirOrigin } from "./cloudflare/requests.ts";
import { lazySchema } from "../../../protocol/lazy-schema.ts";

/** Our exec request; Cloudflare's client shares the route and adds its `origin`. */
const execBodySchema = lazySchema(() => acceptingTheirOrigin(execRequestSchema));

/**
 * Builds what a sandbox's first command is validated with (schemas are built on first use,
 * protocol/lazy-schema.ts), by validating a command as that request would: the image's startup
 * snapshot holds them built, and a server started without it builds them once it is quiet (a command
 * that comes before then builds them itself). Every other route group's schemas wait for their first
 * request.
 */
export function buildExecSchemas(): void {
  execBodySchema.safeParse({ command: "true" });
}

async function execute(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, execBodySchema);
  const { record, attached } = await ctx.server.processes.run(execSpec(request, ctx.server.limits, "buffered"));
  const onGone = () => {
    if (!ctx.res.writableEnded) record.kill("SIGTERM");
  };
  if (request.killOnDisconnect && !attached) ctx.res.once("close", onGone);
  await record.finished;
  ctx.res.off("close", onGone);
  try {
    const timeout = execTimeoutOf(record);
    if (timeout) throw new ServiceError("EXECUTION_TIMEOUT", timeout.message, timeout.result);
    if (!ctx.res.destroyed) sendJson(ctx.res, 200, execResultOf(record));
  } finally {
    // The record stays a while for late readers (status, log); the captured result need not, unless a retry may want it again.
    if (!record.attachable) record.releaseCapture();
  }
}

async function executeStream(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, execBodySchema);
  const { record, attached } = await ctx.server.processes.run(execSpec(request, ctx.server.limits, "stream"));
  if (attached) record.flushOutput();
  await streamExecEvents(ctx, record, attached ? readResumePoint(ctx) : {});
}

/** The exec events of a running or recently finished exec after the resume point. */
async function resumeStream(ctx: RequestContext): Promise<void> {
  const record = ctx.server.processes.get(ctx.params.id!);
  if (record.spec.kind !== "exec") {
    throw new ServiceError("PROCESS_NOT_FOUND", `${record.id} is a background process, not an exec: follow it at ${PROCESS_ROUTES.stream(record.id)}`, {
      processId: record.id,
    });
  }
  const point = readResumePoint(ctx);
  record.flushOutput();
  await streamExecEvents(ctx, record, point);
}

/**
 * Streams an exec's log as exec events. The reader is pinned: the command runs at the reader's pace
 * (like a pipe) instead of losing output. A reader that goes away is waited for (it may resume), or
 * takes the command with it when the exec asked for that (`killOnDisconnect`).
 */
async function streamExecEvents(ctx: RequestContext, record: ManagedProcess, point: ResumePoint): Promise<void> {
  const readers = record.execReaders!;
  const { afterSeq, from } = readerStart(point);
  const reader = readers.open(afterSeq, from);
  let end: StreamEnd = "disconnected";
  try {
    end = await streamLogAsSse(ctx, reader, execFramer(record));
  } finally {
    const killed = end === "disconnected" && record.spec.killOnDisconnect;
    readers.close(reader, end === "disconnected" && !killed);
    if (killed) record.kill("SIGTERM");
  }
}

export const execRoutes: RouteGroup = {
  name: "exec",
  routes: [
    { method: "POST", path: EXEC_ROUTES.execute, handler: execute },
    { method: "POST", path: EXEC_ROUTES.stream, handler: executeStream },
    { method: "GET", path: EXEC_ROUTES.resume.pattern, handler: resumeStream },
  ],
};
