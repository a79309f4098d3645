/**
 * Durable workspaces and snapshots as callers see them (over Workers RPC and /v1): the persistence
 * settings a sandbox keeps, what a backup is, and the requests that make and use them. The bytes
 * are workspace archives (archive.ts) kept in an R2 bucket of the Worker.
 */
import * as z from "zod";
import { archiveDirSchema, archiveExcludePatternsSchema, archivePathsSchema } from "./archive.ts";
import { lazySchema } from "./lazy-schema.ts";

/** The Worker's R2 bucket binding that backups use unless a sandbox names another (wrangler.toml). */
export const DEFAULT_BACKUP_BUCKET = "SANDBOX_BACKUPS";

export const BACKUP_LIMITS = {
  maxNameLength: 256,
  /** Labels per backup, and their sizes: they travel as the object's metadata, which R2 bounds (2 KiB in all). */
  maxLabels: 16,
  maxLabelValueLength: 64,
  /** Longest ttl: ten years, in seconds. */
  maxTtlSeconds: 10 * 365 * 24 * 3600,
  /** The backed-up folder travels in the object's metadata too. */
  maxDirLength: 1024,
} as const;

/** The folder a backup is of, or is restored into: relative to the workspace, or absolute anywhere in the sandbox. */
const backupDirSchema = lazySchema(() => archiveDirSchema.max(BACKUP_LIMITS.maxDirLength));

/** Labels of a backup: names like `kind`, `app.version`; values short text. */
export const backupLabelsSchema = lazySchema(() => z
  .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/, "label names are letters, digits and . _ - (up to 32)"), z.string().max(BACKUP_LIMITS.maxLabelValueLength).regex(/^[^,]*$/, "label values have no commas (a listing filter separates labels with them)"))
  .refine((labels) => Object.keys(labels).length <= BACKUP_LIMITS.maxLabels, `at most ${BACKUP_LIMITS.maxLabels} labels`));

/** A per-sandbox limit on its snapshots; past it createBackup is refused with BACKUP_QUOTA_EXCEEDED. */
export const backupQuotaSchema = lazySchema(() => z.strictObject({
  maxBytes: z.number().int().positive().optional().describe("Compressed bytes all its snapshots may hold"),
  maxCount: z.number().int().positive().optional().describe("Snapshots it may hold"),
}));
export type BackupQuota = z.output<typeof backupQuotaSchema>;

/** Backup ids are UUIDs minted by the sandbox; anything else cannot name one. */
export const backupIdSchema = lazySchema(() => z.uuid("a backup id is the UUID createBackup returned"));

/**
 * A sandbox's durable workspace: the listed paths (default: the whole workspace) are saved to the
 * bucket when the container goes to sleep (`onSleep: "save"`, the default) or is destroyed with
 * `keep: true`, and restored before the first command after the next start.
 */
export const persistenceConfigSchema = lazySchema(() => z.strictObject({
  /** Name of the Worker's R2 bucket binding (default SANDBOX_BACKUPS). */
  bucket: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "bucket is the name of an R2 bucket binding of the Worker, e.g. SANDBOX_BACKUPS")
    .optional(),
  /** Workspace paths to keep (default: the whole workspace). */
  paths: archivePathsSchema.optional(),
  /** "save" (default): save when the container sleeps; "none": only on destroy({ keep: true }). */
  onSleep: z.enum(["save", "none"]).optional(),
}));
export type PersistenceConfig = z.output<typeof persistenceConfigSchema>;

export const createBackupRequestSchema = lazySchema(() => z
  .strictObject({
    /** The folder backed up (default: the workspace); `paths` are in it. Restores go back into it unless told otherwise. */
    dir: backupDirSchema.optional(),
    /** Paths in that folder to include (default: all of it). */
    paths: archivePathsSchema.optional(),
    excludes: archiveExcludePatternsSchema.optional().describe("Wildcard patterns left out (`node_modules`, `*.log`, `.cache/tmp`)"),
    gitignore: z.boolean().optional().describe("Leave out what git ignores in the folder"),
    name: z.string().min(1).max(BACKUP_LIMITS.maxNameLength).optional(),
    labels: backupLabelsSchema.optional().describe("Labels to find it by (listBackups({ labels }))"),
    ttl: z.number().int().positive().max(BACKUP_LIMITS.maxTtlSeconds).optional().describe("Seconds it is kept; then it is removed"),
    expiresAt: z.iso.datetime().optional().describe("When it is removed (ISO); instead of ttl"),
    // Cloudflare's SDK sends these; checked, with no effect: ours always streams a gzip'd tar to the Worker's R2 binding.
    localBucket: z.boolean().optional().describe("Accepted for Cloudflare's SDK; no effect"),
    multipart: z.boolean().optional().describe("Accepted for Cloudflare's SDK; no effect"),
    compression: z
      .strictObject({ format: z.enum(["gzip", "lz4", "zstd"]).optional(), threads: z.number().int().positive().optional() })
      .optional()
      .describe("Accepted for Cloudflare's SDK; no effect (archives are gzip'd)"),
  })
  .refine((request) => request.ttl === undefined || request.expiresAt === undefined, "give ttl or expiresAt, not both"));
export type CreateBackupRequest = z.output<typeof createBackupRequestSchema>;

export const backupInfoSchema = lazySchema(() => z.object({
  id: z.string().describe("UUID"),
  size: z.number().int().describe("Compressed bytes in the bucket"),
  createdAt: z.string().describe("ISO time"),
  name: z.string().optional(),
  dir: z.string().optional().describe("The folder it is of, as given (none: the workspace)"),
  paths: z.array(z.string()).describe('Paths of that folder it holds ("." for all)'),
  labels: z.record(z.string(), z.string()).optional(),
  expiresAt: z.string().optional().describe("When it is removed (ISO); none: kept until deleted"),
}));
export type BackupInfo = z.infer<typeof backupInfoSchema>;

/** restoreBackup()'s options: where to restore (default: the folder it was made of). */
export const restoreBackupRequestSchema = lazySchema(() => z.strictObject({
  dir: backupDirSchema.optional().describe("The folder restored into (default: the one it was made of; made when missing)"),
}));
export type RestoreBackupRequest = z.output<typeof restoreBackupRequestSchema>;

export const restoreBackupResultSchema = lazySchema(() => z.object({
  success: z.literal(true).describe("Always true: a restore that fails is an error (Cloudflare's result shape)"),
  id: z.string().describe("The backup restored"),
  dir: z.string().optional().describe("The folder restored into, as given (none: the workspace)"),
  backup: backupInfoSchema,
  entries: z.number().int().describe("Entries written (files, folders, links)"),
}));
export type RestoreBackupResult = z.infer<typeof restoreBackupResultSchema>;

/** `GET /backups?label=name=value` (repeatable, or comma-separated; `label=name` matches any value): only snapshots with every label. */
export const listBackupsQuerySchema = lazySchema(() => z.object({
  label: z.union([z.string(), z.array(z.string())]).optional(),
}));

/** What a sandbox's snapshots hold in all (getInfo().persistence.backups). */
export const backupUsageSchema = lazySchema(() => z.object({
  count: z.number().int(),
  totalBytes: z.number().int().describe("Compressed bytes in the bucket"),
  quota: backupQuotaSchema.optional(),
}));
export type BackupUsage = z.infer<typeof backupUsageSchema>;

export const deleteBackupResultSchema = lazySchema(() => z.object({ id: z.string() }));
export type DeleteBackupResult = z.infer<typeof deleteBackupResultSchema>;

/** What a sandbox reports about its durable workspace (getInfo().persistence). */
export const persistenceStatusSchema = lazySchema(() => z.object({
  enabled: z.boolean().describe("True when the workspace is saved on sleep or on destroy({ keep: true })"),
  bucket: z.string().describe("The R2 bucket binding used"),
  paths: z.array(z.string()),
  onSleep: z.enum(["save", "none"]),
  lastSave: z.object({ id: z.string(), size: z.number().int(), savedAt: z.string() }).optional().describe("The save the next start restores"),
  lastError: z
    .object({ message: z.string(), at: z.string(), attempts: z.number().int() })
    .optional()
    .describe("The latest failed save, until one succeeds (the previous save is left as it was)"),
  backups: backupUsageSchema.optional().describe("This sandbox's snapshots in all, where the bucket is bound"),
}));
export type PersistenceStatus = z.infer<typeof persistenceStatusSchema>;

/** `DELETE /v1/sandboxes/:id?keep=true` */
export const destroyQuerySchema = lazySchema(() => z.object({
  keep: z.enum(["true", "false"]).optional().describe("true: save the durable workspace first, so the next start restores it"),
}));
