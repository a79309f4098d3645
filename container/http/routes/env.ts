/**
 * The sandbox as a whole: its env (`GET|POST /api/env`, a session's with `sessionId`), what it is and
 * has (`GET /api/info`), and how to describe it to an agent (`GET /api/instructions`).
 */
import os from "node:os";
import { INFO_ROUTES } from "../../../protocol/info.ts";
import { SESSION_ROUTES, setEnvRequestSchema } from "../../../protocol/sessions.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { describeSandbox } from "../../services/instructions.ts";
import { readResources } from "../../services/resources.ts";
import { readJson } from "../request.ts";
import type { RequestContext, RouteGroup } from "../types.ts";

async function setEnv(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, setEnvRequestSchema);
  if (request.sessionId !== undefined) {
    const { sessions } = ctx.server.services;
    const session = sessions.getOrCreate(request.sessionId);
    sessions.setEnv(session, request.vars);
    sendOk(ctx.res, { sessionId: session.id, vars: Object.fromEntries(session.env), unsetEnv: [...session.unset] });
    return;
  }
  const { environment } = ctx.server;
  environment.setSandboxVars(Object.fromEntries(Object.entries(request.vars).map(([name, value]) => [name, value ?? undefined])));
  sendOk(ctx.res, { vars: environment.sandboxVars() });
}

function getEnv(ctx: RequestContext): void {
  const sessionId = ctx.url.searchParams.get("sessionId");
  if (sessionId) {
    const session = ctx.server.services.sessions.get(sessionId);
    sendOk(ctx.res, { sessionId, vars: Object.fromEntries(session.env), unsetEnv: [...session.unset] });
    return;
  }
  sendOk(ctx.res, { vars: ctx.server.environment.sandboxVars() });
}

async function info(ctx: RequestContext): Promise<void> {
  const { isolation, sessions } = ctx.server.services;
  const { server } = ctx;
  sendOk(ctx.res, {
    status: "ok",
    instanceId: server.instanceId,
    version: server.version,
    uptimeMs: Date.now() - server.startedAt,
    workspace: server.workspace,
    resources: await readResources(server.workspace),
    isolation: isolation.info(),
    processes: { live: server.processes.liveCount },
    // This request is not counted (OBSERVING_ROUTES): the counts are of everyone else.
    activity: { openRequests: server.openRequests.count, terminals: server.terminals.liveCount, quietMs: server.openRequests.quietMs(), ...server.work.report() },
    sessions: sessions.list().length,
    platform: { os: os.platform(), arch: os.arch(), kernel: os.release(), node: process.version },
  });
}

function instructions(ctx: RequestContext): void {
  const { isolation } = ctx.server.services;
  const text = describeSandbox({ workspace: ctx.server.workspace, isolation: isolation.info(), path: ctx.server.environment.base.PATH ?? "",
    visible: (dir) => isolation.isVisible(dir),
  });
  sendOk(ctx.res, { instructions: text });
}

export const envRoutes: RouteGroup = {
  name: "env",
  routes: [
    { method: "GET", path: SESSION_ROUTES.env, handler: getEnv },
    { method: "POST", path: SESSION_ROUTES.env, handler: setEnv },
    { method: "GET", path: INFO_ROUTES.info, handler: info },
    { method: "GET", path: INFO_ROUTES.instructions, handler: instructions },
  ],
};
