/**
 * Sessions: named cwd + env that commands with `sessionId` start in and leave behind (protocol/sessions.ts).
 * Deleting a session kills its processes first, so none of them can write state back afterwards.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { createSessionRequestSchema, SESSION_ROUTES } from "../../../protocol/sessions.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { sessionInfo, type Session } from "../../sessions/store.ts";
import { readJson } from "../request.ts";
import type { RequestContext, RouteGroup } from "../types.ts";

function describe(ctx: RequestContext, session: Session) {
  const running = ctx.server.processes.list({ sessionId: session.id }).filter((record) => record.isLive).length;
  return sessionInfo(session, running);
}

async function createSession(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, createSessionRequestSchema);
  const { sessions, isolation } = ctx.server.services;
  let cwd: string | undefined;
  if (request.cwd !== undefined) {
    cwd = path.resolve(ctx.server.workspace, request.cwd);
    const info = await stat(isolation.hostPathOf(cwd)).catch(() => undefined);
    if (!info) throw new ServiceError("FILE_NOT_FOUND", `session cwd does not exist: ${request.cwd}`, { cwd: request.cwd });
    if (!info.isDirectory()) throw new ServiceError("NOT_A_DIRECTORY", `session cwd is not a directory: ${request.cwd}`, { cwd: request.cwd });
  }
  const session = sessions.create({
    ...(request.id === undefined ? {} : { id: request.id }),
    ...(cwd === undefined ? {} : { cwd }),
    ...(request.env === undefined ? {} : { env: request.env }),
  });
  sendOk(ctx.res, { session: describe(ctx, session) });
}

function listSessions(ctx: RequestContext): void {
  const { sessions } = ctx.server.services;
  sendOk(ctx.res, { sessions: sessions.list().map((session) => describe(ctx, session)) });
}

function getSession(ctx: RequestContext): void {
  const session = ctx.server.services.sessions.get(ctx.params.id!);
  sendOk(ctx.res, { session: describe(ctx, session) });
}

async function deleteSession(ctx: RequestContext): Promise<void> {
  const { sessions } = ctx.server.services;
  const id = ctx.params.id!;
  sessions.get(id); // 404 before killing anything
  sessions.delete(id);
  const killed = await ctx.server.processes.killAll({ sessionId: id });
  sendOk(ctx.res, { sessionId: id, killed });
}

export const sessionRoutes: RouteGroup = {
  name: "sessions",
  routes: [
    { method: "POST", path: SESSION_ROUTES.create, handler: createSession },
    { method: "GET", path: SESSION_ROUTES.list, handler: listSessions },
    { method: "GET", path: "/api/session/:id", handler: getSession },
    { method: "DELETE", path: "/api/session/:id", handler: deleteSession },
  ],
};
