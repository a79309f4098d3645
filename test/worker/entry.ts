/**
 * The Worker as the workers tests run it: the service's own module, but a Sandbox whose object is
 * named `platform-…` runs as on Cloudflare, without the local runtime's channel (no
 * SANDBOX_CONTAINER_URL), so the tests of the platform's egress (platform-container.ts) see the
 * Durable Object take the path it takes there. Its container is still workerd's, on the runtime's
 * engine. Every other sandbox is the service's, unchanged.
 */
import { Sandbox as ServiceSandbox } from "../../src/sandbox/durable-object.ts";
import type { Env } from "../../src/env.ts";

// Named one by one: the pool learns the module's entrypoints (ctx.exports) from its own exports.
export { ContainerProxy } from "../../src/index.ts";
export { default } from "../../src/index.ts";

/** The object names that take the platform's path. */
export const PLATFORM_PATH_PREFIX = "platform-";

export class Sandbox extends ServiceSandbox {
  constructor(ctx: DurableObjectState<{}>, env: Env) {
    const platformPath = ctx.id.name?.startsWith(PLATFORM_PATH_PREFIX) === true;
    super(ctx, platformPath ? { ...env, SANDBOX_CONTAINER_URL: undefined } : env);
  }
}
