/**
 * The MCP endpoint on the Worker: Streamable HTTP, served by the official SDK's web-standard handler
 * (`createMcpHandler`) with one fresh server per request, so no session state lives in the Worker
 * and any Worker instance answers any request. The 2026-07-28 protocol is served, and 2025-era
 * clients (most desktop clients today) through the SDK's stateless fallback. Same bearer token as
 * /v1: the per-sandbox path is under /v1/sandboxes/:id, whose auth and id checks the app applies.
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { Hono } from "hono";
import { requireToken } from "../api/auth.ts";
import { bodyLimits } from "../api/body-limit.ts";
import type { ApiEnv } from "../api/types.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { sandboxStub } from "../api/sandbox-param.ts";
import { MCP_PATHS } from "./paths.ts";
import { sandboxMcpServer, type McpScope } from "./server.ts";

function serve(request: Request, scope: McpScope): Promise<Response> {
  const origin = new URL(request.url).origin;
  const handler = createMcpHandler(() => sandboxMcpServer(scope, origin), {
    maxRequestBodySize: LIMITS.maxRequestBodyBytes,
    // The SDK's keepalive comments hold quiet tool calls' streams open, as ours do on /v1.
    keepAliveMs: LIMITS.keepaliveMs,
  });
  return handler.fetch(request);
}

export function mcpRoutes(): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.use(MCP_PATHS.shared, requireToken(), bodyLimits());
  app.all(MCP_PATHS.shared, (c) => serve(c.req.raw, { kind: "shared", open: (id) => sandboxStub(c.env, id) }));
  app.all(MCP_PATHS.perSandbox, (c) => serve(c.req.raw, { kind: "sandbox", sandboxId: c.var.sandboxId, sandbox: c.var.sandbox }));
  return app;
}
