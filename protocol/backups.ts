/**
 * Durable workspaces and snapshots as callers see them (over Workers RPC and /v1): the persistence
 * settings a sandbox keeps, what a backup is, and the requests that make and use them. The bytes
 * are workspace archives (archive.ts) kept in an R2 bucket of the Worker.
 */
import { z } from "zod";
import { archivePathsSchema } from "./archive.ts";

/** The Worker's R2 bucket binding that backups use unless a sandbox names another (wrangler.toml). */
export const DEFAULT_BACKUP_BUCKET = "SANDBOX_BACKUPS";

export const BACKUP_LIMITS = {
  maxNameLength: 256,
} as const;

/** Backup ids are UUIDs minted by the sandbox; anything else cannot name one. */
export const backupIdSchema = z.uuid("a backup id is the UUID createBackup returned");

/**
 * A sandbox's durable workspace: the listed paths (default: the whole workspace) are saved to the
 * bucket when the container goes to sleep (`onSleep: "save"`, the default) or is destroyed with
 * `keep: true`, and restored before the first command after the next start.
 */
export const persistenceConfigSchema = z.strictObject({
  /** Name of the Worker's R2 bucket binding (default SANDBOX_BACKUPS). */
  bucket: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "bucket is the name of an R2 bucket binding of the Worker, e.g. SANDBOX_BACKUPS")
    .optional(),
  /** Workspace paths to keep (default: the whole workspace). */
  paths: archivePathsSchema.optional(),
  /** "save" (default): save when the container sleeps; "none": only on destroy({ keep: true }). */
  onSleep: z.enum(["save", "none"]).optional(),
});
export type PersistenceConfig = z.output<typeof persistenceConfigSchema>;

export const createBackupRequestSchema = z.strictObject({
  /** Workspace paths to include (default: the whole workspace). */
  paths: archivePathsSchema.optional(),
  name: z.string().min(1).max(BACKUP_LIMITS.maxNameLength).optional(),
});
export type CreateBackupRequest = z.output<typeof createBackupRequestSchema>;

export const backupInfoSchema = z.object({
  id: z.string().describe("UUID"),
  size: z.number().int().describe("Compressed bytes in the bucket"),
  createdAt: z.string().describe("ISO time"),
  name: z.string().optional(),
  paths: z.array(z.string()).describe('Workspace paths it holds ("." for all)'),
});
export type BackupInfo = z.infer<typeof backupInfoSchema>;

export const restoreBackupResultSchema = z.object({
  backup: backupInfoSchema,
  entries: z.number().int().describe("Entries written (files, folders, links)"),
});
export type RestoreBackupResult = z.infer<typeof restoreBackupResultSchema>;

export const deleteBackupResultSchema = z.object({ id: z.string() });
export type DeleteBackupResult = z.infer<typeof deleteBackupResultSchema>;

/** What a sandbox reports about its durable workspace (getInfo().persistence). */
export const persistenceStatusSchema = z.object({
  enabled: z.boolean().describe("True when the workspace is saved on sleep or on destroy({ keep: true })"),
  bucket: z.string().describe("The R2 bucket binding used"),
  paths: z.array(z.string()),
  onSleep: z.enum(["save", "none"]),
  lastSave: z.object({ id: z.string(), size: z.number().int(), savedAt: z.string() }).optional().describe("The save the next start restores"),
  lastError: z
    .object({ message: z.string(), at: z.string(), attempts: z.number().int() })
    .optional()
    .describe("The latest failed save, until one succeeds (the previous save is left as it was)"),
});
export type PersistenceStatus = z.infer<typeof persistenceStatusSchema>;

/** `DELETE /v1/sandboxes/:id?keep=true` */
export const destroyQuerySchema = z.object({
  keep: z.enum(["true", "false"]).optional().describe("true: save the durable workspace first, so the next start restores it"),
});
