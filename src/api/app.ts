/**
 * The Worker's public HTTP API: REST + SSE under /v1/sandboxes/:id, bearer-token auth, JSON errors
 * with wire codes, and the OpenAPI document at /v1/openapi.json; beside it, Cloudflare's Bridge API,
 * and the web console when it is switched on.
 */
import { Hono } from "hono";
import { requireToken } from "./auth.ts";
import { bridgeApi } from "./bridge/index.ts";
import { bodyLimits } from "./body-limit.ts";
import { errorResponse, handleError } from "./errors.ts";
import { openApiDocument } from "./openapi.ts";
import { consoleRoutes } from "../console/routes.ts";
import { archiveRoutes } from "./routes/archive.ts";
import { codeRoutes } from "./routes/code.ts";
import { terminalRoutes } from "./routes/terminals.ts";
import { portRoutes } from "./routes/ports.ts";
import { noPathPreviews } from "./port-proxy.ts";
import { execRoutes } from "./routes/exec.ts";
import { fileRoutes } from "./routes/files.ts";
import { lifecycleRoutes } from "./routes/lifecycle.ts";
import { processRoutes } from "./routes/processes.ts";
import { derivedRoutes } from "./routes/derived.ts";
import { streamUrlRoutes } from "./routes/stream-urls.ts";
import { sandboxParam } from "./sandbox-param.ts";
import { mcpRoutes } from "../mcp/routes.ts";
import type { ApiEnv } from "./types.ts";

export function createApp(): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.onError(handleError);
  app.notFound((c) => errorResponse(c, "NOT_FOUND", `No route for ${c.req.method} ${new URL(c.req.url).pathname}`));

  app.get("/v1", (c) => c.json({ service: "sandbox", api: "/v1", openapi: "/v1/openapi.json", docs: "/v1/docs" }));
  // The web console (/) and the API reference (/v1/docs) when SANDBOX_CONSOLE is "on": src/console/.
  app.route("/", consoleRoutes);
  app.get("/v1/openapi.json", (c) => c.json(openApiDocument(new URL(c.req.url).origin)));

  // Preview ports are served on origins of their own (src/index.ts, ./port-proxy.ts), never here.
  app.use("/v1/sandboxes/:id/ports/:port/*", noPathPreviews());
  app.use("/v1/sandboxes/*", requireToken(), bodyLimits());
  app.use("/v1/sandboxes/:id/*", sandboxParam());
  app.use("/v1/sandboxes/:id", sandboxParam());
  for (const routes of [derivedRoutes, lifecycleRoutes, execRoutes, processRoutes, fileRoutes, codeRoutes, terminalRoutes, portRoutes, streamUrlRoutes, archiveRoutes]) app.route("/v1/sandboxes/:id", routes);
  // The MCP endpoint (/v1/mcp, /v1/sandboxes/:id/mcp): src/mcp/.
  app.route("/", mcpRoutes());
  // Cloudflare's Bridge API beside ours (/v1/sandbox/…, /health): src/api/bridge/.
  app.route("/", bridgeApi());
  return app;
}
