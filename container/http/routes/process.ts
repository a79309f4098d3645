/**
 * Background processes: start, inspect, read logs, stream the log (resumable), write stdin, kill,
 * clean up. Unknown ids are 404 PROCESS_NOT_FOUND on every route, including `GET /api/process/{id}`
 * (not `{process: null}`: one rule for all routes is clearer for clients).
 *
 * Exec records answer by id too (a broken exec stream resumes at `GET /api/execute/{id}/stream`,
 * see exec.ts); list and cleanup leave them out unless asked with `?include=exec`.
 */
import { parseSignal, PROCESS_ROUTES, startProcessRequestSchema, stdinRequestSchema } from "../../../protocol/process.ts";
import { MAX_TAIL_BYTES, processTailsQuerySchema } from "../../../protocol/process-tails.ts";
import { logTail } from "../../engine/log-tail.ts";
import type { KillAllResponse, OutputStream, StartProcessResponse, WithoutEnvelope } from "../../../protocol/process.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { LogReader, readerStart } from "../../engine/log-reader.ts";
import type { ProcessFilter } from "../../engine/process-table.ts";
import { decodeInput, startSpec } from "../../engine/options.ts";
import { readJson, readResumePoint } from "../request.ts";
import { streamLogAsSse } from "../streams/sse.ts";
import { logFramer } from "../streams/sse-frames.ts";
import type { RequestContext, RouteGroup } from "../types.ts";
import { acceptingTheirOrigin } from "./cloudflare/requests.ts";
import { lazySchema } from "../../../protocol/lazy-schema.ts";

/** Our start request; Cloudflare's client shares the route and adds its `origin`. */
const startBodySchema = lazySchema(() => acceptingTheirOrigin(startProcessRequestSchema));

function sessionFilter(ctx: RequestContext): ProcessFilter {
  const sessionId = ctx.url.searchParams.get("sessionId");
  return sessionId ? { sessionId } : {};
}

/**
 * What list and cleanup cover: background processes; with `?include=exec`, exec records as well
 * (running execs, and finished ones kept for resuming).
 */
function recordFilter(ctx: RequestContext): ProcessFilter {
  const include = ctx.url.searchParams.getAll("include").flatMap((value) => value.split(",")).map((value) => value.trim()).filter(Boolean);
  const unknown = include.filter((value) => value !== "exec");
  if (unknown.length > 0) throw new ServiceError("INVALID_REQUEST", `include accepts "exec", not ${JSON.stringify(unknown[0])}`, { include: unknown });
  return include.includes("exec") ? sessionFilter(ctx) : { ...sessionFilter(ctx), kind: "background" };
}

function signalParam(ctx: RequestContext): NodeJS.Signals {
  const raw = ctx.url.searchParams.get("signal");
  const signal = parseSignal(raw);
  if (!signal) throw new ServiceError("INVALID_SIGNAL", `not a signal: ${raw}`, { signal: raw });
  return signal as NodeJS.Signals;
}

async function start(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, startBodySchema);
  // A retry of the same start (by idempotency key or process id) answers with the first run.
  const { record } = await ctx.server.processes.run(startSpec(request, ctx.server.limits));
  const info = record.info();
  const reply: WithoutEnvelope<StartProcessResponse> = { process: info, processId: info.id, command: info.command, ...(info.pid === undefined ? {} : { pid: info.pid }) };
  sendOk(ctx.res, reply);
}

function list(ctx: RequestContext): void {
  sendOk(ctx.res, { processes: ctx.server.processes.list(recordFilter(ctx)).map((record) => record.info()) });
}

function get(ctx: RequestContext): void {
  sendOk(ctx.res, { process: ctx.server.processes.get(ctx.params.id!).info() });
}

function logs(ctx: RequestContext): void {
  const record = ctx.server.processes.get(ctx.params.id!);
  record.flushOutput();
  const encoding = record.spec.encoding;
  const text = (stream: OutputStream) => Buffer.concat(record.log.retainedOutput(stream)).toString(encoding);
  sendOk(ctx.res, {
    processId: record.id,
    stdout: text("stdout"),
    stderr: text("stderr"),
    ...(encoding === "base64" ? { encoding } : {}),
    stdoutDropped: record.log.leadingDroppedBytes("stdout"),
    stderrDropped: record.log.leadingDroppedBytes("stderr"),
  });
}

async function kill(ctx: RequestContext): Promise<void> {
  const signal = signalParam(ctx);
  const record = await ctx.server.processes.kill(ctx.params.id!, signal);
  sendOk(ctx.res, { processId: record.id, signal, status: record.status });
}

async function killAll(ctx: RequestContext): Promise<void> {
  const signal = signalParam(ctx);
  const killed = await ctx.server.processes.killAll(sessionFilter(ctx), signal);
  const reply: WithoutEnvelope<KillAllResponse> = { killed, cleanedCount: killed };
  sendOk(ctx.res, reply);
}

function cleanup(ctx: RequestContext): void {
  sendOk(ctx.res, { cleaned: ctx.server.processes.cleanup(recordFilter(ctx)) });
}

/** SSE of the process log from the resume point (protocol/resume.ts); ends after the final status. */
async function stream(ctx: RequestContext): Promise<void> {
  const record = ctx.server.processes.get(ctx.params.id!);
  const point = readResumePoint(ctx);
  record.flushOutput();
  const { afterSeq, from } = readerStart(point);
  const reader = new LogReader(record.log, afterSeq, { from });
  await streamLogAsSse(ctx, reader, logFramer(record));
}

/** Every background process with the tail of its log: what the Durable Object keeps when the container goes. */
function tails(ctx: RequestContext): void {
  const parsed = processTailsQuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!parsed.success) throw new ServiceError("INVALID_REQUEST", `bytes must be a whole number from 1 to ${MAX_TAIL_BYTES}`, { bytes: ctx.url.searchParams.get("bytes") });
  const records = ctx.server.processes.list({ kind: "background" });
  sendOk(ctx.res, { processes: records.map((record) => ({ process: record.info(), events: logTail(record, parsed.data.bytes) })) });
}

async function stdin(ctx: RequestContext): Promise<void> {
  // The body first: a malformed one is refused as such, whatever the id.
  const request = await readJson(ctx, stdinRequestSchema);
  const record = ctx.server.processes.get(ctx.params.id!);
  const data = "data" in request ? decodeInput(request.data, request.encoding, ctx.server.limits.maxStdinBytes) : Buffer.alloc(0);
  const close = request.close === true;
  const bytesWritten = await record.writeStdin(data, close);
  sendOk(ctx.res, { processId: record.id, bytesWritten, closed: close });
}

export const processRoutes: RouteGroup = {
  name: "process",
  routes: [
    { method: "POST", path: PROCESS_ROUTES.start, handler: start },
    { method: "GET", path: PROCESS_ROUTES.list, handler: list },
    { method: "DELETE", path: PROCESS_ROUTES.killAll, handler: killAll },
    { method: "POST", path: PROCESS_ROUTES.cleanup, handler: cleanup },
    { method: "GET", path: PROCESS_ROUTES.tails, handler: tails },
    { method: "GET", path: PROCESS_ROUTES.one.pattern, handler: get },
    { method: "DELETE", path: PROCESS_ROUTES.one.pattern, handler: kill },
    { method: "GET", path: PROCESS_ROUTES.logs.pattern, handler: logs },
    { method: "GET", path: PROCESS_ROUTES.stream.pattern, handler: stream },
    { method: "POST", path: PROCESS_ROUTES.stdin.pattern, handler: stdin },
  ],
};
