/**
 * Durable workspaces and snapshots as they cross Workers RPC and /v1: the options each call takes
 * and its result (shapes decided in protocol/backups.ts).
 */
export type { BackupInfo, DeleteBackupResult, PersistenceConfig, PersistenceStatus, RestoreBackupResult } from "../../protocol/backups.ts";
export type { ImportArchiveResult } from "../../protocol/archive.ts";

export interface CreateBackupOptions {
  /** The folder backed up (default: the workspace; relative to it, or absolute anywhere in the sandbox). Restores go back into it. */
  dir?: string;
  /** Paths in that folder to include (default: all of it). */
  paths?: string[];
  /** Wildcard patterns left out (`node_modules`, `*.log`: at any depth; `.cache/tmp`: that path). */
  excludes?: string[];
  /** Leave out what git ignores in the folder (nothing, outside a repository). */
  gitignore?: boolean;
  /** Cloudflare's SDK sends these: checked, with no effect (ours always streams a gzip'd tar to the Worker's R2 binding). */
  localBucket?: boolean;
  multipart?: boolean;
  compression?: { format?: "gzip" | "lz4" | "zstd"; threads?: number };
  name?: string;
  /** Labels to find it by (listBackups({ label })). */
  labels?: Record<string, string>;
  /** Seconds it is kept; then it is removed. */
  ttl?: number;
  /** When it is removed (ISO), instead of ttl. */
  expiresAt?: string;
}

/** restoreBackup(): where to restore. */
export interface RestoreBackupOptions {
  /** The folder restored into (default: the one the backup was made of; made when missing). */
  dir?: string;
}

/**
 * A backup as restoreBackup() also takes it: the record createBackup returned, or `{ id, dir }` (the
 * handle Cloudflare's SDK keeps). Its `dir` is where it is restored unless the options say otherwise.
 */
export interface BackupHandle {
  id: string;
  dir?: string;
  /** Cloudflare's handle says where it was kept; ours are always in the Worker's R2 binding. */
  localBucket?: boolean;
}

/** fork(): a snapshot to fork from instead of the live workspace. */
export interface ForkOptions {
  from?: string;
}
export type { ForkResult } from "../../protocol/fork.ts";

/** listBackups(): only those with every label given, `name=value` or `name` (any value). */
export interface ListBackupsOptions {
  label?: string | string[];
}

/** exportArchive(): what to put in the archive, and how. */
export interface ExportArchiveOptions {
  /** The folder archived (default: the workspace; relative to it, or absolute anywhere in the sandbox). */
  dir?: string;
  /** Paths in that folder (default: all of it). */
  paths?: string[];
  /** Paths in that folder left out, with everything below them. */
  exclude?: string[];
  /** Wildcard patterns left out (`node_modules`, `*.log`: at any depth; `.cache/tmp`: that path). */
  excludes?: string[];
  /** Leave out what git ignores in the folder (nothing, outside a repository). */
  gitignore?: boolean;
  /** "tar.gz" (default) or "tar". */
  format?: "tar.gz" | "tar";
}


/** importArchive(): where to extract. */
export interface ImportArchiveOptions {
  /** The folder extracted into (default: the workspace; relative to it, or absolute anywhere in the sandbox; made when missing). */
  dir?: string;
}

export interface DestroyOptions {
  /** Save the durable workspace first, so the next start restores it (needs persistence configured). */
  keep?: boolean;
}
