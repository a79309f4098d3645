/**
 * Worker entry: the /v1 HTTP API, and the Sandbox Durable Object class the platform instantiates.
 * Requests whose Host names a preview port (`<port>-<id>.<SANDBOX_PREVIEW_DOMAIN>`) go to that port.
 */
import { createApp } from "./api/app.ts";
import { hostPortProxy } from "./api/port-proxy.ts";
import type { Env } from "./env.ts";

export { Sandbox } from "./sandbox.ts";

const app = createApp();

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    return hostPortProxy(request, env) ?? app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
