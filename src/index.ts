/**
 * Worker entry: the /v1 HTTP API, and the Sandbox Durable Object class the platform instantiates.
 * Preview-port traffic, told apart by its Host (`<port>-<id>.localhost`, `<port>-<id>.<SANDBOX_PREVIEW_DOMAIN>`,
 * or the origin of path-based URLs), goes to the port and never reaches the API or the console.
 * `ContainerProxy` is the entrypoint through which Cloudflare hands a container's outbound requests
 * to the Worker's egress handler (src/sandbox/cloudflare-egress/).
 */
import { createApp } from "./api/app.ts";
import { previewPortDoor } from "./api/port-proxy.ts";
import type { Env } from "./env.ts";

export { Sandbox } from "./sandbox/durable-object.ts";
export { ContainerProxy } from "@cloudflare/containers";

const app = createApp();

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> {
    return previewPortDoor(request, env) ?? app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
