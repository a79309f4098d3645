/**
 * Terminals over JSON: create, list, get, read output after a cursor, write input, resize, kill, and
 * delete. Unknown ids are 404 TERMINAL_NOT_FOUND. The WebSocket of a terminal
 * (`GET /api/terminals/:id/ws`) is an upgrade, served by terminal-socket.ts.
 */
import { parseSignal } from "../../../protocol/process.ts";
import {
  createTerminalRequestSchema,
  TERMINAL_ROUTES,
  resizeTerminalRequestSchema,
  terminalSinceSchema,
  writeTerminalRequestSchema,
  type TerminalOutput,
} from "../../../protocol/terminals.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { readJson } from "../request.ts";
import type { RequestContext, RouteGroup } from "../types.ts";

function since(ctx: RequestContext): number {
  const parsed = terminalSinceSchema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!parsed.success) throw new ServiceError("INVALID_REQUEST", "since must be a cursor (a whole number, 0 or more)", { since: ctx.url.searchParams.get("since") });
  return parsed.data.since;
}

async function create(ctx: RequestContext): Promise<void> {
  const options = await readJson(ctx, createTerminalRequestSchema);
  const terminal = await ctx.server.terminals.create(options);
  sendOk(ctx.res, { terminal: terminal.info() });
}

function output(ctx: RequestContext): void {
  const terminal = ctx.server.terminals.get(ctx.params.id!);
  const { notice, entries } = terminal.log.read(since(ctx), Infinity);
  let cursor = since(ctx);
  const chunks: Buffer[] = [];
  for (const entry of entries) {
    if (entry.kind === "output") chunks.push(entry.data);
    cursor = entry.seq;
  }
  const exit = terminal.exit;
  const reply: TerminalOutput = {
    terminalId: terminal.id,
    data: Buffer.concat(chunks).toString("base64"),
    cursor,
    droppedBytes: notice?.droppedBytes ?? 0,
    status: terminal.status,
    ...(exit?.exitCode === undefined ? {} : { exitCode: exit.exitCode }),
  };
  sendOk(ctx.res, reply);
}

async function write(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, writeTerminalRequestSchema);
  const terminal = ctx.server.terminals.get(ctx.params.id!);
  const bytes = Buffer.from(request.data, request.encoding);
  terminal.write(bytes);
  sendOk(ctx.res, { terminalId: terminal.id, bytes: bytes.length });
}

async function resize(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, resizeTerminalRequestSchema);
  const terminal = ctx.server.terminals.get(ctx.params.id!);
  terminal.resize(request.cols, request.rows);
  sendOk(ctx.res, { terminal: terminal.info() });
}

function interrupt(ctx: RequestContext): void {
  const terminal = ctx.server.terminals.get(ctx.params.id!);
  terminal.interrupt();
  sendOk(ctx.res, { terminalId: terminal.id });
}

function kill(ctx: RequestContext): void {
  const raw = ctx.url.searchParams.get("signal");
  const signal = parseSignal(raw);
  if (!signal) throw new ServiceError("INVALID_SIGNAL", `not a signal: ${raw}`, { signal: raw });
  const terminal = ctx.server.terminals.get(ctx.params.id!);
  terminal.kill(signal as NodeJS.Signals);
  sendOk(ctx.res, { terminalId: terminal.id, signal });
}

/** Long-polls until the program has exited (the caller bounds the wait by its own timeout). */
async function wait(ctx: RequestContext): Promise<void> {
  const terminal = ctx.server.terminals.get(ctx.params.id!);
  await terminal.exited;
  sendOk(ctx.res, { terminal: terminal.info() });
}

async function remove(ctx: RequestContext): Promise<void> {
  await ctx.server.terminals.remove(ctx.params.id!);
  sendOk(ctx.res, { terminalId: ctx.params.id! });
}

export const terminalRoutes: RouteGroup = {
  name: "terminals",
  routes: [
    { method: "POST", path: TERMINAL_ROUTES.list, handler: create },
    { method: "GET", path: TERMINAL_ROUTES.list, handler: (ctx) => sendOk(ctx.res, { terminals: ctx.server.terminals.list().map((terminal) => terminal.info()) }) },
    { method: "GET", path: TERMINAL_ROUTES.one.pattern, handler: (ctx) => sendOk(ctx.res, { terminal: ctx.server.terminals.get(ctx.params.id!).info() }) },
    { method: "DELETE", path: TERMINAL_ROUTES.one.pattern, handler: remove },
    { method: "GET", path: TERMINAL_ROUTES.output.pattern, handler: output },
    { method: "POST", path: TERMINAL_ROUTES.write.pattern, handler: write },
    { method: "POST", path: TERMINAL_ROUTES.resize.pattern, handler: resize },
    { method: "POST", path: TERMINAL_ROUTES.interrupt.pattern, handler: interrupt },
    { method: "POST", path: TERMINAL_ROUTES.kill.pattern, handler: kill },
    { method: "GET", path: TERMINAL_ROUTES.wait.pattern, handler: wait },
  ],
};
