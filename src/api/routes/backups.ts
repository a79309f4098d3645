/** Snapshots of a sandbox's workspace in the Worker's R2 bucket: create, list, restore into the running sandbox, delete. */
import { Hono } from "hono";
import { createBackupRequestSchema } from "../../../protocol/backups.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody } from "../validate.ts";

export const backupRoutes = new Hono<ApiEnv>()
  .post("/backups", jsonBody(createBackupRequestSchema), async (c) => c.json({ backup: await c.var.sandbox.createBackup(c.req.valid("json")) }, 201))
  .get("/backups", async (c) => c.json({ backups: await c.var.sandbox.listBackups() }))
  .post("/backups/:bid/restore", async (c) => c.json(await c.var.sandbox.restoreBackup(c.req.param("bid"))))
  .delete("/backups/:bid", async (c) => c.json(await c.var.sandbox.deleteBackup(c.req.param("bid"))));
