/**
 * Sessions as Cloudflare's Sandbox SDK asks for them: `POST /api/session/create {id, env?, cwd?}`
 * (their Durable Object creates its default session this way before its first command, and recovers
 * only from SESSION_ALREADY_EXISTS) and `POST /api/session/delete {sessionId}`. Both are our session
 * operations; the replies carry the container's placement id, which their Durable Object records.
 */
import * as z from "zod";
import { createSessionRequestSchema, sessionIdSchema } from "../../../../protocol/sessions.ts";
import { sendOk } from "../../../../server-kit/http/response.ts";
import { isServiceError, ServiceError } from "../../../../server-kit/service-error.ts";
import { sessionInfo } from "../../../sessions/store.ts";
import { sessionOperations } from "../sessions.ts";
import type { RequestContext, Route } from "../../types.ts";
import { cloudflareRoute } from "./errors.ts";
import { readTheirJson } from "./requests.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";
import { lazySchema } from "../../../../protocol/lazy-schema.ts";

/** Cloudflare's platform names the machine a container runs on in this variable (null elsewhere). */
function placementId(): string | null {
  return process.env.CLOUDFLARE_PLACEMENT_ID ?? null;
}

async function create(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, createSessionRequestSchema);
  try {
    const session = await sessionOperations.create(ctx.server, request);
    sendOk(ctx.res, { id: session.id, data: sessionInfo(session, 0), containerPlacementId: placementId() });
  } catch (error) {
    if (isServiceError(error) && error.code === "SESSION_EXISTS") {
      throw new ServiceError(error.code, error.message, { ...error.context, containerPlacementId: placementId() });
    }
    throw error;
  }
}

const deleteRequestSchema = lazySchema(() => z.object({ sessionId: sessionIdSchema }));

async function remove(ctx: RequestContext): Promise<void> {
  const { sessionId } = await readTheirJson(ctx, deleteRequestSchema);
  sendOk(ctx.res, await sessionOperations.delete(ctx.server, sessionId));
}

export const cloudflareSessionRoutes: Route[] = [
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.sessionCreate, create),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.sessionDelete, remove),
];
