/**
 * Durable workspaces and snapshots as they cross Workers RPC and /v1: the options each call takes
 * and its result (shapes decided in protocol/backups.ts).
 */
export type { BackupInfo, DeleteBackupResult, PersistenceConfig, PersistenceStatus, RestoreBackupResult } from "../../protocol/backups.ts";

export interface CreateBackupOptions {
  /** Workspace paths to include (default: the whole workspace). */
  paths?: string[];
  name?: string;
}

export interface DestroyOptions {
  /** Save the durable workspace first, so the next start restores it (needs persistence configured). */
  keep?: boolean;
}
