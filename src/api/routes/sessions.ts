/** Sessions (named cwd + env that commands run in and leave behind) and the sandbox's env vars. */
import { Hono } from "hono";
import { createSessionRequestSchema, setEnvRequestSchema } from "../../../protocol/sessions.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const sessionRoutes = new Hono<ApiEnv>()
  .post("/sessions", jsonBody(createSessionRequestSchema), async (c) => {
    return c.json({ session: await c.var.sandbox.createSession(c.req.valid("json")) }, 201);
  })
  .get("/sessions", async (c) => c.json({ sessions: await c.var.sandbox.listSessions() }))
  .get("/sessions/:sid", async (c) => c.json({ session: await c.var.sandbox.getSession(c.req.param("sid")) }))
  .delete("/sessions/:sid", async (c) => c.json(await c.var.sandbox.deleteSession(c.req.param("sid"))))
  .post("/env", jsonBody(setEnvRequestSchema), async (c) => {
    const { vars, sessionId } = c.req.valid("json");
    await c.var.sandbox.setEnvVars(vars, sessionId === undefined ? {} : { sessionId });
    return c.body(null, 204);
  });
