/** POST /git/clone: a repository cloned into the sandbox's workspace (the client's gitCheckout). */
import { Hono } from "hono";
import { gitCloneRequestSchema } from "../../../protocol/git.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const gitRoutes = new Hono<ApiEnv>().post("/git/clone", jsonBody(gitCloneRequestSchema), async (c) => {
  const { repoUrl, ...options } = c.req.valid("json");
  return c.json(await c.var.sandbox.gitCheckout(repoUrl, options));
});
