/**
 * Cloudflare's Bridge API (the `/v1/sandbox/…` HTTP API of their bridge Worker), served beside our
 * own `/v1/sandboxes/…`, so tools built on it (`@computesdk/cloudflare`, Python's
 * `CloudflareSandboxClient`) run against this service unchanged. It needs our bearer token, reaches
 * the sandbox's Durable Object through the same RPC contract as our routes, and answers errors in the
 * Bridge's `{error, code}` shape.
 *
 *   POST   /v1/sandbox                     → {id} ({exposedPorts?} exposed at once; mounts: 501)
 *   POST   /v1/sandbox/:id/exec            → SSE: stdout / stderr (base64), exit {exit_code}, error {error, code}
 *   GET    /v1/sandbox/:id/file/<path>     → raw bytes          PUT … ← raw bytes → {ok: true}
 *   GET    /v1/sandbox/:id/running         → {running}          DELETE /v1/sandbox/:id → 204
 *   POST   /v1/sandbox/:id/session         → {id}               DELETE /v1/sandbox/:id/session/:sid
 *   GET    /health                         → {ok: true} (no token)
 *   POST   /v1/sandbox/:id/tunnel/:port    → Tunnel (a preview port)   DELETE … → 204
 *   GET    /v1/sandbox/:id/tunnel/:port    → the Tunnel of an exposed port (404 port_not_exposed); GET …/tunnel lists
 *   POST|GET /v1/sandbox/:id/persist       → the workspace as a tar (?excludes=a,b)
 *   POST   /v1/sandbox/:id/hydrate         ← a tar → {ok: true}
 *   GET    /v1/sandbox/:id/pty             → WebSocket to the session's terminal
 *   mount, unmount, /v1/pool/… → 501 not_implemented
 */
import { Hono } from "hono";
import { requireToken } from "../auth.ts";
import { bodyLimits } from "../body-limit.ts";
import { sandboxParam } from "../sandbox-param.ts";
import type { ApiEnv } from "../types.ts";
import { bridgeErrors } from "./errors.ts";
import { bridgeExecRoutes } from "./exec.ts";
import { bridgeArchiveRoutes } from "./workspace-archive.ts";
import { bridgeFileRoutes } from "./files.ts";
import { bridgeCreateRoutes, bridgeLifecycleRoutes } from "./lifecycle.ts";
import { bridgePoolRoutes, bridgeUnavailableRoutes } from "./unavailable.ts";
import { bridgeSessionRoutes } from "./sessions.ts";
import { bridgePtyRoutes } from "./pty.ts";
import { bridgeTunnelRoutes } from "./tunnel.ts";

/** A file upload (`PUT /v1/sandbox/:id/file/<path>`) and a hydrate's tar stream on: only their declared length is checked. */
const FILE_UPLOAD = /^\/v1\/sandbox\/[^/]+\/(file\/.+|hydrate)$/;

export function bridgeApi(): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  // `/x/*` also matches `/x` itself: one registration per prefix.
  for (const path of ["/v1/sandbox/*", "/v1/pool/*"]) app.use(path, bridgeErrors(), requireToken(), bodyLimits(FILE_UPLOAD));
  app.use("/v1/sandbox/:id/*", sandboxParam());
  app.route("/v1/sandbox", bridgeCreateRoutes);
  for (const routes of [bridgeLifecycleRoutes, bridgeExecRoutes, bridgeFileRoutes, bridgeSessionRoutes, bridgeTunnelRoutes, bridgeArchiveRoutes, bridgePtyRoutes, bridgeUnavailableRoutes]) {
    app.route("/v1/sandbox/:id", routes);
  }
  app.route("/v1/pool", bridgePoolRoutes);
  app.get("/health", (c) => c.json({ ok: true }));
  return app;
}
