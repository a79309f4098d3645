/**
 * The sandbox itself: its state (starting the container if needed), what its container reports
 * (status, resources, isolation), a description for agents, its settings, destroying it (`?keep=true`:
 * saving its durable workspace first).
 */
import { Hono } from "hono";
import type { ApiEnv } from "../types.ts";
import { configRequestSchema } from "../schemas.ts";
import { destroyQuery } from "../backup-schemas.ts";
import { jsonBody, queryParams } from "../validate.ts";

export const lifecycleRoutes = new Hono<ApiEnv>()
  .get("/", async (c) => c.json({ id: c.var.sandboxId, ...(await c.var.sandbox.info()) }))
  .get("/info", async (c) => c.json({ id: c.var.sandboxId, ...(await c.var.sandbox.getInfo()) }))
  .get("/instructions", async (c) => c.json({ instructions: await c.var.sandbox.getInstructions() }))
  .get("/isolation", async (c) => c.json(await c.var.sandbox.detectIsolation()))
  .patch("/config", jsonBody(configRequestSchema), async (c) => {
    await c.var.sandbox.configure(c.req.valid("json"));
    return c.body(null, 204);
  })
  .delete("/", queryParams(destroyQuery), async (c) => {
    await c.var.sandbox.destroy({ keep: c.req.valid("query").keep === "true" });
    return c.body(null, 204);
  });
