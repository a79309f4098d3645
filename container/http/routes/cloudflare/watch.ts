/**
 * File watching as Cloudflare's Sandbox SDK asks for it. `POST /api/watch {path, recursive?, events?,
 * include?, exclude?, sessionId}` is our watch stream (http/watch-stream.ts) framed their way: bare
 * `data:` frames, `watching` with a `watchId`, each change as `event` with `eventType` and the
 * absolute path, `stopped` or `error` at the end. A move reaches them as delete and create (never
 * `move_from`/`move_to`), and we have no `attrib`. They have no overflow event: changes a slow reader
 * made us drop are not announced to them.
 *
 * `POST /api/watch/check {path, …, since?}` is our change digest (routes/watch.ts) in their statuses:
 * `unchanged`/`changed` against a version of ours, `resync` for a version that is not one of ours.
 */
import { randomUUID } from "node:crypto";
import * as z from "zod";
import { changesRequestSchema, WATCH_VERSION_PATTERN, watchRequestSchema, type WatchEvent } from "../../../../protocol/watch.ts";
import { sendOk } from "../../../../server-kit/http/response.ts";
import { streamWatch } from "../../streams/watch-stream.ts";
import type { RequestContext, Route } from "../../types.ts";
import { checkChanges } from "../watch.ts";
import { cloudflareRoute } from "./errors.ts";
import { readTheirJson } from "./requests.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";
import { lazySchema } from "../../../../protocol/lazy-schema.ts";

const THEIR_EVENT_TYPES = ["create", "modify", "delete", "move_from", "move_to", "attrib"] as const;

const theirWatchSchema = lazySchema(() => watchRequestSchema.extend({ events: z.array(z.enum(THEIR_EVENT_TYPES)).optional() }));

/** Their session id (every call carries one) has no meaning for a watch. */
const withoutSession = ({ sessionId: _session, ...body }: Record<string, unknown>) => body;

const frame = (event: object) => `data: ${JSON.stringify(event)}\n\n`;

async function watch(ctx: RequestContext): Promise<void> {
  const { events, ...request } = await readTheirJson(ctx, theirWatchSchema, withoutSession);
  const wanted = new Set<string>(events === undefined || events.length === 0 ? THEIR_EVENT_TYPES : events);
  const watchId = `watch-${randomUUID()}`;
  let root = "";
  await streamWatch(ctx, request, (event: WatchEvent) => {
    switch (event.type) {
      case "watching":
        root = event.path;
        return frame({ type: "watching", path: event.path, watchId });
      case "change":
        if (!wanted.has(event.kind)) return undefined;
        return frame({ type: "event", eventType: event.kind, path: `${root}/${event.path}`, isDirectory: event.isDirectory, timestamp: event.timestamp });
      case "overflow":
        return undefined;
      case "stopped":
        return frame({ type: "stopped", reason: event.reason });
      case "error":
        return frame({ type: "error", error: event.error });
    }
  });
}

async function check(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, changesRequestSchema, withoutSession);
  const result = await checkChanges(ctx.server, request);
  if (request.since !== undefined && !WATCH_VERSION_PATTERN.test(request.since)) {
    return sendOk(ctx.res, { status: "resync", reason: "restarted", version: result.version });
  }
  sendOk(ctx.res, { status: result.changed ? "changed" : "unchanged", version: result.version });
}

export const cloudflareWatchRoutes: Route[] = [cloudflareRoute("POST", CLOUDFLARE_ROUTES.watch, watch), cloudflareRoute("POST", CLOUDFLARE_ROUTES.watchCheck, check)];
