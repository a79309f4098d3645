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

export interface BackupInfo {
  id: string;
  /** Compressed bytes in the bucket. */
  size: number;
  createdAt: string;
  name?: string;
  /** What it holds, relative to the workspace ("." for all of it). */
  paths: string[];
}

export interface RestoreBackupResult {
  backup: BackupInfo;
  /** Entries written (files, folders, links). */
  entries: number;
}

export interface DeleteBackupResult {
  id: string;
}

/** What a sandbox reports about its durable workspace (getInfo().persistence). */
export interface PersistenceStatus {
  /** True when the workspace is saved on sleep or on destroy({ keep: true }). */
  enabled: boolean;
  bucket: string;
  paths: string[];
  onSleep: "save" | "none";
  /** The save the next start restores. */
  lastSave?: { id: string; size: number; savedAt: string };
  /** The latest failed save, until a save succeeds; the previous save is left as it was. */
  lastError?: { message: string; at: string; attempts: number };
}
