/**
 * Sessions: named shell state that commands start in and leave behind (protocol/sessions.ts).
 * Deleting a session kills its processes first, so none of them can write state back afterwards.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { createSessionRequestSchema, SESSION_ROUTES, type CreateSessionRequest } from "../../../protocol/sessions.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { sessionInfo, type Session } from "../../sessions/store.ts";
import { readJson } from "../request.ts";
import type { RequestContext, RouteGroup, ServerContext } from "../types.ts";

function describe(server: ServerContext, session: Session) {
  const running = server.processes.list({ sessionId: session.id }).filter((record) => record.isLive).length;
  return sessionInfo(session, running);
}

/**
 * Creating and deleting a session, from a validated request to its result: one place that decides
 * each, for our routes below and for routes that speak another API's shapes (routes/cloudflare/).
 */
export const sessionOperations = {
  async create(server: ServerContext, request: CreateSessionRequest): Promise<Session> {
    const { sessions, isolation } = server.services;
    let cwd: string | undefined;
    if (request.cwd !== undefined) {
      cwd = path.resolve(server.workspace, request.cwd);
      const info = await stat(isolation.hostPathOf(cwd)).catch(() => undefined);
      if (!info) throw new ServiceError("FILE_NOT_FOUND", `session cwd does not exist: ${request.cwd}`, { cwd: request.cwd });
      if (!info.isDirectory()) throw new ServiceError("NOT_A_DIRECTORY", `session cwd is not a directory: ${request.cwd}`, { cwd: request.cwd });
    }
    return sessions.create({
      ...(request.id === undefined ? {} : { id: request.id }),
      ...(cwd === undefined ? {} : { cwd }),
      ...(request.env === undefined ? {} : { env: request.env }),
      ...(request.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: request.commandTimeoutMs }),
    });
  },
  /**
   * SESSION_NOT_FOUND before anything is killed; then the session's processes are killed. The
   * default session is replaced by a fresh one (a command naming no session always has one).
   */
  async delete(server: ServerContext, id: string): Promise<{ sessionId: string; killed: number }> {
    const { sessions } = server.services;
    sessions.get(id);
    sessions.delete(id);
    const killed = await server.processes.killAll({ sessionId: id });
    return { sessionId: id, killed };
  },
};

async function createSession(ctx: RequestContext): Promise<void> {
  const session = await sessionOperations.create(ctx.server, await readJson(ctx, createSessionRequestSchema));
  sendOk(ctx.res, { session: describe(ctx.server, session) });
}

function listSessions(ctx: RequestContext): void {
  const { sessions } = ctx.server.services;
  sendOk(ctx.res, { sessions: sessions.list().map((session) => describe(ctx.server, session)) });
}

function getSession(ctx: RequestContext): void {
  const session = ctx.server.services.sessions.get(ctx.params.id!);
  sendOk(ctx.res, { session: describe(ctx.server, session) });
}

async function deleteSession(ctx: RequestContext): Promise<void> {
  sendOk(ctx.res, await sessionOperations.delete(ctx.server, ctx.params.id!));
}

export const sessionRoutes: RouteGroup = {
  name: "sessions",
  routes: [
    { method: "POST", path: SESSION_ROUTES.create, handler: createSession },
    { method: "GET", path: SESSION_ROUTES.list, handler: listSessions },
    { method: "GET", path: SESSION_ROUTES.one.pattern, handler: getSession },
    { method: "DELETE", path: SESSION_ROUTES.one.pattern, handler: deleteSession },
  ],
};
