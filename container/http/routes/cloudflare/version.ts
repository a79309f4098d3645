/**
 * `GET /api/version`: the container's version, which Cloudflare's Durable Object asks for whenever a
 * container starts (a version other than its own SDK's is only logged). We answer with our server's
 * own version rather than pretend to be theirs.
 */
import { sendOk } from "../../../../server-kit/http/response.ts";
import type { Route } from "../../types.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";

export const cloudflareVersionRoutes: Route[] = [
  { method: "GET", path: CLOUDFLARE_ROUTES.version, handler: ({ res, server }) => sendOk(res, { version: server.version }) },
];
