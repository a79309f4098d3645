/**
 * The code interpreter (protocol/code.ts): contexts, runs buffered and streamed, resuming a run's
 * stream, interrupting a run. A streamed run's reader is pinned like an exec's: the cell runs at the
 * reader's pace rather than lose output. A reader that goes away leaves the cell running, unless the
 * run asked for `interruptOnDisconnect`; a buffered caller that goes away has its cell interrupted,
 * unless its run is named by an idempotency key. A run named by a key runs at most once: a retry
 * gets the first run's Execution, or its events from the retry's resume point.
 */
import { CODE_ROUTES, createCodeContextRequestSchema, runCodeRequestSchema } from "../../../protocol/code.ts";
import type { ResumePoint } from "../../../protocol/resume.ts";
import { sendJson, sendOk } from "../../../server-kit/http/response.ts";
import { LogReader, readerStart } from "../../engine/log-reader.ts";
import type { CodeExecution } from "../../interpreter/execution.ts";
import { codeFramer } from "../streams/code-frames.ts";
import { readJson, readResumePoint } from "../request.ts";
import { streamLogAsSse } from "../streams/sse.ts";
import type { RequestContext, RouteGroup } from "../types.ts";

async function createContext(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, createCodeContextRequestSchema);
  const context = await ctx.server.code.create(request);
  sendOk(ctx.res, { context: context.info() });
}

function listContexts(ctx: RequestContext): void {
  sendOk(ctx.res, { contexts: ctx.server.code.list().map((context) => context.info()) });
}

function getContext(ctx: RequestContext): void {
  sendOk(ctx.res, { context: ctx.server.code.get(ctx.params.id!).info() });
}

async function deleteContext(ctx: RequestContext): Promise<void> {
  const contextId = ctx.params.id!;
  const cancelled = await ctx.server.code.delete(contextId);
  sendOk(ctx.res, { contextId, cancelled });
}

async function restartContext(ctx: RequestContext): Promise<void> {
  const context = await ctx.server.code.restart(ctx.params.id!);
  sendOk(ctx.res, { context: context.info() });
}

/**
 * The Execution once the cell is over. A caller that goes away before then wants no answer: its cell
 * is interrupted (the context keeps its state), so a dropped call never leaves a context busy.
 */
async function run(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, runCodeRequestSchema);
  const { execution } = await ctx.server.code.runOnce(request, { buffered: true });
  // A caller that goes away takes its cell with it, unless the run is named by a key: then the caller
  // may come back for it, and the run goes on for the retry to attach to.
  const onClose = () => {
    if (!execution.isOver) ctx.server.code.interrupt(execution.id);
  };
  if (request.idempotencyKey === undefined) ctx.res.once("close", onClose);
  await execution.finished;
  ctx.res.off("close", onClose);
  try {
    if (!ctx.res.destroyed) sendJson(ctx.res, 200, execution.execution());
  } finally {
    // A keyed run's Execution stays with the run for a retry.
    if (request.idempotencyKey === undefined) execution.releaseExecution();
  }
}

async function runStream(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, runCodeRequestSchema);
  const { execution, attached } = await ctx.server.code.runOnce(request, { buffered: false });
  if (attached) execution.flushOutput();
  await streamRunEvents(ctx, execution, attached ? readResumePoint(ctx) : {});
}

/** The events of a running or recently finished run after the resume point. */
async function resumeStream(ctx: RequestContext): Promise<void> {
  const execution = ctx.server.code.execution(ctx.params.id!);
  const point = readResumePoint(ctx);
  execution.flushOutput();
  await streamRunEvents(ctx, execution, point);
}

/** From a resume point: after its event id, and within a cut output event from its byte offsets. */
async function streamRunEvents(ctx: RequestContext, execution: CodeExecution, point: ResumePoint): Promise<void> {
  const { afterSeq, from } = readerStart(point);
  const reader = new LogReader(execution.log, afterSeq, { pin: true, from });
  try {
    // A reader that is to take the cell with it must be noticed soon when it goes: keep writing.
    const keepaliveMs = execution.spec.interruptOnDisconnect ? ctx.server.limits.codeDisconnectProbeMs : ctx.server.limits.keepaliveMs;
    const end = await streamLogAsSse(ctx, reader, codeFramer(), keepaliveMs);
    if (end === "disconnected" && execution.spec.interruptOnDisconnect && !execution.isOver) ctx.server.code.interrupt(execution.id);
  } finally {
    reader.unpin();
  }
}

function interrupt(ctx: RequestContext): void {
  const executionId = ctx.params.id!;
  sendOk(ctx.res, { executionId, interrupted: ctx.server.code.interrupt(executionId) });
}

export const codeRoutes: RouteGroup = {
  name: "code",
  routes: [
    { method: "POST", path: CODE_ROUTES.contexts, handler: createContext },
    { method: "GET", path: CODE_ROUTES.contexts, handler: listContexts },
    { method: "GET", path: CODE_ROUTES.context.pattern, handler: getContext },
    { method: "DELETE", path: CODE_ROUTES.context.pattern, handler: deleteContext },
    { method: "POST", path: CODE_ROUTES.restart.pattern, handler: restartContext },
    { method: "POST", path: CODE_ROUTES.run, handler: run },
    { method: "POST", path: CODE_ROUTES.runStream, handler: runStream },
    { method: "GET", path: CODE_ROUTES.executionStream.pattern, handler: resumeStream },
    { method: "POST", path: CODE_ROUTES.interrupt.pattern, handler: interrupt },
  ],
};
