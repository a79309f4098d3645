/**
 * `POST /api/git/checkout {repoUrl, sessionId, targetDir, branch?, depth?, timeoutMs}`: Cloudflare's
 * `gitCheckout`, which is our clone (container/git/clone.ts) under their name. Their request uses our
 * field names; their reply (`repoUrl`, `branch`, `targetDir`) is ours, which also carries the commit.
 */
import { gitCloneRequestSchema } from "../../../../protocol/git.ts";
import { sendOk } from "../../../../server-kit/http/response.ts";
import { cloneRepository } from "../../../git/clone.ts";
import type { RequestContext, Route } from "../../types.ts";
import { cloudflareRoute } from "./errors.ts";
import { readTheirJson } from "./requests.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";

async function checkout(ctx: RequestContext): Promise<void> {
  sendOk(ctx.res, await cloneRepository(ctx.server, await readTheirJson(ctx, gitCloneRequestSchema)));
}

export const cloudflareGitRoutes: Route[] = [cloudflareRoute("POST", CLOUDFLARE_ROUTES.gitCheckout, checkout)];
