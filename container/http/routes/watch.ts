/**
 * Watching files (protocol/watch.ts): `POST /api/files/watch` streams changes as Server-Sent Events
 * (http/watch-stream.ts), `POST /api/files/changes` answers whether a tree changed since a version.
 */
import { formatSseEvent } from "../../../protocol/sse.ts";
import { changesRequestSchema, WATCH_ROUTES, watchRequestSchema, type ChangesRequest } from "../../../protocol/watch.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { currentVersion } from "../../watch/roots.ts";
import { readJson } from "../request.ts";
import { streamWatch } from "../streams/watch-stream.ts";
import type { RequestContext, RouteGroup, ServerContext } from "../types.ts";

/** The change check, for our route and Cloudflare's. */
export async function checkChanges(server: ServerContext, request: ChangesRequest) {
  const current = await currentVersion(server.services.paths, request);
  return { ...current, changed: request.since !== undefined && request.since !== current.version };
}

async function watchFiles(ctx: RequestContext): Promise<void> {
  await streamWatch(ctx, await readJson(ctx, watchRequestSchema), formatSseEvent);
}

async function changes(ctx: RequestContext): Promise<void> {
  sendOk(ctx.res, await checkChanges(ctx.server, await readJson(ctx, changesRequestSchema)));
}

export const watchRoutes: RouteGroup = {
  name: "watch",
  routes: [
    { method: "POST", path: WATCH_ROUTES.watch, handler: watchFiles },
    { method: "POST", path: WATCH_ROUTES.changes, handler: changes },
  ],
};
