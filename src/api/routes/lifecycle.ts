/**
 * The sandbox routes the bindings cannot derive (src/rpc/bindings/lifecycle.ts): its state and what
 * its container reports, which the answer gives with the sandbox's id, and destroying it, whose
 * `?keep=true` (save the durable workspace first) is the method's boolean.
 */
import { Hono } from "hono";
import { destroyQuerySchema } from "../../../protocol/backups.ts";
import { API_METHODS } from "../../rpc/bindings/index.ts";
import type { ApiEnv } from "../types.ts";
import { queryParams } from "../validate.ts";

export const lifecycleRoutes = new Hono<ApiEnv>()
  .get(API_METHODS.info.path, async (c) => c.json({ id: c.var.sandboxId, ...(await c.var.sandbox.info()) }))
  .get(API_METHODS.getInfo.path, async (c) => c.json({ id: c.var.sandboxId, ...(await c.var.sandbox.getInfo()) }))
  .delete(API_METHODS.destroy.path, queryParams(destroyQuerySchema), async (c) => {
    await c.var.sandbox.destroy({ keep: c.req.valid("query").keep === "true" });
    return c.body(null, 204);
  });
