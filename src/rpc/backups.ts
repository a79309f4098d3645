/**
 * Durable workspaces and snapshots as they cross Workers RPC and /v1: the options each call takes
 * and its result (shapes decided in protocol/backups.ts).
 */
export type { BackupInfo, DeleteBackupResult, PersistenceConfig, PersistenceStatus, RestoreBackupResult } from "../../protocol/backups.ts";
export type { ImportArchiveResult } from "../../protocol/archive.ts";

export interface CreateBackupOptions {
  /** Workspace paths to include (default: the whole workspace). */
  paths?: string[];
  name?: string;
  /** Labels to find it by (listBackups({ label })). */
  labels?: Record<string, string>;
  /** Seconds it is kept; then it is removed. */
  ttl?: number;
  /** When it is removed (ISO), instead of ttl. */
  expiresAt?: string;
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
