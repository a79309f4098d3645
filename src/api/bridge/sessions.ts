/**
 * Sessions through the Bridge API: `POST /v1/sandbox/:id/session {id?, cwd?, env?}` → `{id}`, and
 * `DELETE /v1/sandbox/:id/session/:sid`. A `Session-Id` header on exec and file calls runs them in
 * that session; without one, exec starts from the default session's cwd and env.
 */
import { Hono } from "hono";
import { createSessionRequestSchema, sessionIdSchema } from "../../../protocol/sessions.ts";
import { InvalidRequestError } from "../../rpc/errors.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";
import { workspaceRelative } from "./paths.ts";

export const SESSION_HEADER = "Session-Id";

/** The session a `Session-Id` header names (undefined without one). */
export function sessionHeader(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!sessionIdSchema.safeParse(value).success) throw new InvalidRequestError(`Invalid ${SESSION_HEADER}: ${JSON.stringify(value)}`, "INVALID_REQUEST");
  return value;
}

export const bridgeSessionRoutes = new Hono<ApiEnv>()
  .post("/session", jsonBody(createSessionRequestSchema), async (c) => {
    const { cwd, ...request } = c.req.valid("json");
    const session = await c.var.sandbox.createSession({ ...request, ...(cwd === undefined ? {} : { cwd: workspaceRelative(cwd) }) });
    return c.json({ id: session.id });
  })
  .delete("/session/:sid", async (c) => {
    const result = await c.var.sandbox.deleteSession(c.req.param("sid"));
    return c.json({ success: true, ...result });
  });
