/**
 * Schemas of the /v1 snapshot routes beyond the protocol's request body: the destroy query and the
 * response bodies. Routes validate with them and the OpenAPI document is generated from them.
 */
import { z } from "zod";

/** `DELETE /v1/sandboxes/:id?keep=true` */
export const destroyQuery = z.object({
  keep: z.enum(["true", "false"]).optional().describe("true: save the durable workspace first, so the next start restores it"),
});

export const backupInfoSchema = z.object({
  id: z.string().describe("UUID"),
  size: z.number().int().describe("Compressed bytes in the bucket"),
  createdAt: z.string().describe("ISO time"),
  name: z.string().optional(),
  paths: z.array(z.string()).describe('Workspace paths it holds ("." for all)'),
});

export const backupResponseSchema = z.object({ backup: backupInfoSchema });
export const backupListSchema = z.object({ backups: z.array(backupInfoSchema) });
export const restoreBackupResultSchema = z.object({ backup: backupInfoSchema, entries: z.number().int() });
export const deleteBackupResultSchema = z.object({ id: z.string() });

/** getInfo().persistence: the durable workspace's settings, last save and last failure. */
export const persistenceStatusSchema = z.object({
  enabled: z.boolean(),
  bucket: z.string().describe("The R2 bucket binding used"),
  paths: z.array(z.string()),
  onSleep: z.enum(["save", "none"]),
  lastSave: z.object({ id: z.string(), size: z.number().int(), savedAt: z.string() }).optional(),
  lastError: z.object({ message: z.string(), at: z.string(), attempts: z.number().int() }).optional().describe("The latest failed save, until one succeeds"),
});

export const importArchiveResultSchema = z.object({ entries: z.number().int(), bytes: z.number().int().describe("Archive bytes read") });
