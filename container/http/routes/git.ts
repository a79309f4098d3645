/** `POST /api/git/clone` (protocol/git.ts): a repository cloned into the workspace (container/git/clone.ts). */
import { gitCloneRequestSchema, GIT_ROUTES } from "../../../protocol/git.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { cloneRepository } from "../../git/clone.ts";
import { readJson } from "../request.ts";
import type { RequestContext, RouteGroup } from "../types.ts";

async function clone(ctx: RequestContext): Promise<void> {
  sendOk(ctx.res, await cloneRepository(ctx.server, await readJson(ctx, gitCloneRequestSchema)));
}

export const gitRoutes: RouteGroup = {
  name: "git",
  routes: [{ method: "POST", path: GIT_ROUTES.clone, handler: clone }],
};
