/** Snapshots in the Worker's R2 bucket and the workspace as a tar stream, over /v1 (../backups.ts has their options). */
import { createArchiveRequestSchema, importArchiveResultSchema } from "../../../protocol/archive.ts";
import { forkRequestSchema, forkResultSchema } from "../../../protocol/fork.ts";
import { backupInfoSchema, createBackupRequestSchema, deleteBackupResultSchema, listBackupsQuerySchema, restoreBackupRequestSchema, restoreBackupResultSchema } from "../../../protocol/backups.ts";
import type { Binding } from "./binding.ts";

export const backupBindings = {
  createBackup: {
    verb: "POST",
    path: "/backups",
    args: ["body"],
    body: createBackupRequestSchema,
    response: backupInfoSchema,
    key: "backup",
    status: 201,
    summary:
      "Snapshot the workspace (or the folder `dir`; `paths` in it, less `excludes` patterns and, with `gitignore`, what git ignores) into the Worker's R2 bucket, streamed as a gzip'd tar, with `labels` and an expiry (`ttl` seconds or `expiresAt`). 501 PERSISTENCE_NOT_CONFIGURED without the bucket binding; 507 BACKUP_QUOTA_EXCEEDED past the sandbox's backupQuota.",
    described: "Saved",
  },
  listBackups: {
    verb: "GET",
    path: "/backups",
    args: ["query"],
    query: listBackupsQuerySchema,
    response: backupInfoSchema.array(),
    key: "backups",
    summary: "This sandbox's snapshots, oldest first; `label=name=value` (repeatable, `label=name` for any value) keeps those with every label. Expired ones are gone",
    described: "Snapshots",
  },
  restoreBackup: {
    verb: "POST",
    path: "/backups/:bid/restore",
    args: [{ path: "bid" }, "body"],
    body: restoreBackupRequestSchema,
    response: restoreBackupResultSchema,
    summary: "Replace the snapshot's paths in the running sandbox with what it holds: in the folder it was made of, or `dir` (made when missing)",
    described: "Restored",
  },
  deleteBackup: {
    verb: "DELETE",
    path: "/backups/:bid",
    args: [{ path: "bid" }],
    response: deleteBackupResultSchema,
    summary: "Delete a snapshot (404 BACKUP_NOT_FOUND for an id this sandbox does not have)",
    described: "Deleted",
  },
  fork: {
    verb: "POST",
    path: "/fork",
    args: [{ body: "newId" }, "body"],
    body: forkRequestSchema,
    response: forkResultSchema,
    status: 201,
    summary:
      "Make a new sandbox `newId` with this one's workspace (live, or the snapshot `from`), config and env, none of its processes. The bytes go container to container; 409 SANDBOX_EXISTS for an id that has run before.",
    described: "Forked",
  },
  exportArchive: {
    verb: "POST",
    path: "/archive/export",
    args: ["body"],
    body: createArchiveRequestSchema,
    summary:
      'The workspace (or the folder `dir`; `paths` in it, less `exclude`) as a tar stream: gzip\'d (`application/gzip`) unless `format` is "tar" (`application/x-tar`). Links stay links.',
    // Raw bytes, streamed as they are made.
    byHand: ["route", "client", "openapi"],
  },
  importArchive: {
    verb: "PUT",
    path: "/archive",
    args: ["body"],
    response: importArchiveResultSchema,
    summary: "Extract a tar or tar.gz body over the workspace (or the folder `?dir=`, made when missing), streamed. Absolute paths, `..`, hard links out and writing through a link are 400 INVALID_ARCHIVE.",
    described: "Extracted",
    // The body is the archive's raw bytes, streamed.
    byHand: ["route", "client", "openapi"],
  },
} as const satisfies Record<string, Binding>;
