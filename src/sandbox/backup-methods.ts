/**
 * The Durable Object's methods on the workspace as a whole: snapshots in the R2 bucket
 * (persistence/), forks into a new sandbox, and tar archives in and out (persistence/archive-io.ts).
 * Archives stream as the container makes or takes them; while they flow, the container stays awake.
 */
import { createArchiveRequestSchema, importArchiveOptionsSchema } from "../../protocol/archive.ts";
import { createBackupRequestSchema, listBackupsQuerySchema, restoreBackupRequestSchema } from "../../protocol/backups.ts";
import { forkRequestSchema } from "../../protocol/fork.ts";
import { isValidSandboxId } from "../../protocol/sandbox.ts";
import { errorFromCode, InvalidRequestError } from "../rpc/errors.ts";
import { fromRpcError } from "../rpc/rpc-errors.ts";
import type { SandboxConfig } from "../rpc/sandbox.ts";
import { CONFIG_KEY } from "./config.ts";
import { extractOver, extractReplacing, openArchive } from "./persistence/archive-io.ts";
import { parseRequest } from "./request.ts";
import type { FamilyMethods } from "./shell.ts";

/** The alarm's callback (Container.schedule calls the object's method of this name). */
const REMOVE_EXPIRED = "removeExpiredBackups";

export const backupMethods = {
  createBackup: (shell, options = {}) =>
    shell.call(async ({ api }) => {
      const request = parseRequest(createBackupRequestSchema, options, "backup request");
      const backup = await shell.persistence.backups().create(api, request, shell.backupQuota());
      // The alarm removes it from the bucket when it expires (it is gone to callers from then on anyway).
      if (backup.expiresAt !== undefined) await shell.object.schedule(new Date(backup.expiresAt), REMOVE_EXPIRED);
      return backup;
    }),

  /** Needs no container: the bucket alone knows. */
  listBackups: (shell, options = {}) =>
    shell.guard(async () => {
      const { label } = parseRequest(listBackupsQuerySchema, options, "backup listing");
      const labels = (label === undefined ? [] : [label].flat()).flatMap((part) => part.split(",")).filter(Boolean);
      return shell.persistence.backups().list(labels);
    }),

  /** Run by the alarm at a backup's expiry: removes the expired ones, and is set again for the next. */
  removeExpiredBackups: async (shell) => {
    try {
      const next = await shell.persistence.backups().removeExpired();
      if (next !== undefined) await shell.object.schedule(new Date(next), REMOVE_EXPIRED);
    } catch (error) {
      console.error(`sandbox ${shell.sandboxId}: removing expired backups failed:`, error instanceof Error ? error.message : error);
    }
  },

  restoreBackup: (shell, id, options = {}) =>
    shell.call(async ({ api }) => {
      const request = parseRequest(restoreBackupRequestSchema, options, "restore request");
      const store = shell.persistence.backups();
      await store.get(id);
      return store.restore(api, id, request);
    }),

  deleteBackup: (shell, id) => shell.guard(() => shell.persistence.backups().delete(id)),

  /**
   * A new sandbox with this one's workspace (live, or the snapshot `from`), config and env. The
   * archive streams from this container (or the bucket) into the new sandbox's container, over
   * Workers RPC between the two Durable Objects: nothing passes through the caller, and several
   * forks of one sandbox run side by side.
   */
  fork: (shell, newId, options = {}) =>
    shell.guard(async () => {
      const request = parseRequest(forkRequestSchema, { ...options, newId }, "fork request");
      const parent = shell.sandboxId;
      if (!isValidSandboxId(request.newId)) throw new InvalidRequestError(`${JSON.stringify(request.newId)} is not a valid sandbox id`, "INVALID_SANDBOX_ID");
      if (request.newId === parent) throw new InvalidRequestError("a sandbox cannot be forked into itself", "INVALID_REQUEST");
      const config = (await shell.ctx.storage.get<SandboxConfig>(CONFIG_KEY)) ?? {};
      const child = shell.env.Sandbox.get(shell.env.Sandbox.idFromName(request.newId));
      const { entries } = await shell.keepingAwake(async () => {
        const archive = request.from === undefined ? await openArchive((await shell.link()).api, {}) : await shell.persistence.backups().open(request.from);
        // The child's coded errors cross Workers RPC encoded: decoded, they keep their code.
        return child.acceptFork(config, archive).catch((error: unknown) => {
          throw fromRpcError(error);
        });
      });
      return { id: request.newId, parent, from: request.from ?? null, entries };
    }),

  /**
   * The receiving end of fork(): only a sandbox that has never run takes one. It keeps the parent's
   * config, starts its container and extracts the archive into its workspace as it arrives.
   */
  acceptFork: (shell, config, archive) =>
    shell.guard(async () => {
      if ((await shell.generations.everRan()) || (await shell.ctx.storage.get(CONFIG_KEY)) !== undefined) {
        await archive.cancel().catch(() => undefined);
        throw errorFromCode("SANDBOX_EXISTS", `sandbox ${shell.ctx.id.name ?? ""} has run before: a fork makes a new sandbox`, { context: { sandboxId: shell.ctx.id.name } });
      }
      await shell.updateConfig(() => ({ ...config }));
      const { api } = await shell.link();
      const entries = await shell.keepingAwake(() => extractReplacing(api, archive, ["."]));
      return { entries };
    }),

  /** The archive streams out as the container makes it; while it does, the container stays awake. */
  exportArchive: (shell, options = {}) =>
    shell.call(async ({ api }) => shell.guardStream(await openArchive(api, parseRequest(createArchiveRequestSchema, options, "archive request")))),

  importArchive: (shell, body, options = {}) =>
    shell.call(async ({ api }) => {
      if (!(body instanceof ReadableStream)) throw new InvalidRequestError("importArchive needs a ReadableStream of bytes", "INVALID_REQUEST");
      return extractOver(api, body, parseRequest(importArchiveOptionsSchema, options, "archive import").dir);
    }),
} satisfies FamilyMethods;
