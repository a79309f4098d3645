/**
 * Explicit snapshots of a sandbox: createBackup streams a workspace archive from the container into
 * the bucket (never whole in memory: upload.ts), listBackups reads the sandbox's own prefix,
 * restoreBackup streams one back into the running container (into the folder it was made of, or
 * another), deleteBackup removes it. What a backup is (folder, name, paths, time, labels, expiry) travels as the object's metadata, so the object is the whole
 * record: a backup exists exactly when its upload completed.
 *
 * A backup past its expiry is gone to every caller at once (not listed; a restore or fork of it is
 * BACKUP_EXPIRED until removeExpired, which the Durable Object's alarm runs at the expiry, removes it
 * from the bucket; then BACKUP_NOT_FOUND). A sandbox's
 * quota (bytes, count) is checked as a backup is made: one that would pass it is not kept.
 */
import { ARCHIVE_MEDIA_TYPE } from "../../../protocol/archive.ts";
import {
  backupIdSchema,
  type BackupInfo,
  type BackupQuota,
  type BackupUsage,
  type CreateBackupRequest,
  type DeleteBackupResult,
  type RestoreBackupRequest,
  type RestoreBackupResult,
} from "../../../protocol/backups.ts";
import { SandboxError } from "../../rpc/errors.ts";
import type { ContainerApi } from "../container-api.ts";
import { extractReplacing, openArchive } from "./archive-io.ts";
import { openRanged } from "./download.ts";
import { bucketCall } from "./failures.ts";
import type { BackupKeys } from "./keys.ts";
import { uploadStream } from "./upload.ts";

function notFound(id: string): SandboxError {
  return new SandboxError(`This sandbox has no backup ${JSON.stringify(id)}`, "BACKUP_NOT_FOUND", { context: { backupId: id } });
}

function pastExpiry(backup: BackupInfo): SandboxError {
  return new SandboxError(`The backup ${JSON.stringify(backup.id)} expired at ${backup.expiresAt}`, "BACKUP_EXPIRED", { context: { backupId: backup.id, expiresAt: backup.expiresAt } });
}

/** Metadata of a backup object → its record. */
function describe(id: string, object: R2Object): BackupInfo {
  const meta = object.customMetadata ?? {};
  return {
    id,
    size: object.size,
    createdAt: meta.createdAt ?? object.uploaded.toISOString(),
    ...(meta.dir === undefined ? {} : { dir: meta.dir }),
    ...(meta.name === undefined ? {} : { name: meta.name }),
    paths: meta.paths ? (JSON.parse(meta.paths) as string[]) : ["."],
    ...(meta.labels === undefined ? {} : { labels: JSON.parse(meta.labels) as Record<string, string> }),
    ...(meta.expiresAt === undefined ? {} : { expiresAt: meta.expiresAt }),
  };
}

const expired = (backup: BackupInfo, now = Date.now()) => backup.expiresAt !== undefined && Date.parse(backup.expiresAt) <= now;

/** `name=value` needs that value; `name` alone, any value. */
function hasLabels(backup: BackupInfo, wanted: readonly string[]): boolean {
  return wanted.every((label) => {
    const at = label.indexOf("=");
    const name = at < 0 ? label : label.slice(0, at);
    const value = backup.labels?.[name];
    return value !== undefined && (at < 0 || value === label.slice(at + 1));
  });
}

function quotaExceeded(message: string, quota: BackupQuota, usage: Omit<BackupUsage, "quota">): SandboxError {
  return new SandboxError(message, "BACKUP_QUOTA_EXCEEDED", { context: { quota, count: usage.count, totalBytes: usage.totalBytes } });
}

export class BackupStore {
  readonly #bucket: R2Bucket;
  readonly #keys: BackupKeys;

  constructor(bucket: R2Bucket, keys: BackupKeys) {
    this.#bucket = bucket;
    this.#keys = keys;
  }

  async create(api: ContainerApi, request: CreateBackupRequest, quota: BackupQuota = {}): Promise<BackupInfo> {
    const before = quota.maxBytes === undefined && quota.maxCount === undefined ? undefined : await this.usage();
    if (before && quota.maxCount !== undefined && before.count >= quota.maxCount) {
      throw quotaExceeded(`This sandbox keeps at most ${quota.maxCount} backups: delete one first`, quota, before);
    }
    const id = crypto.randomUUID();
    const createdAt = new Date().toISOString();
    const paths = request.paths ?? ["."];
    const expiresAt = request.expiresAt ?? (request.ttl === undefined ? undefined : new Date(Date.now() + request.ttl * 1000).toISOString());
    const fields = {
      ...(request.dir === undefined ? {} : { dir: request.dir }),
      ...(request.name === undefined ? {} : { name: request.name }),
      ...(request.labels === undefined ? {} : { labels: request.labels }),
      ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
    };
    const customMetadata: Record<string, string> = {
      createdAt,
      paths: JSON.stringify(paths),
      ...(fields.dir === undefined ? {} : { dir: fields.dir }),
      ...(fields.name === undefined ? {} : { name: fields.name }),
      ...(fields.labels === undefined ? {} : { labels: JSON.stringify(fields.labels) }),
      ...(fields.expiresAt === undefined ? {} : { expiresAt: fields.expiresAt }),
    };
    const archive = await openArchive(api, {
      ...(request.dir === undefined ? {} : { dir: request.dir }),
      ...(request.paths === undefined ? {} : { paths: request.paths }),
      ...(request.excludes === undefined ? {} : { excludes: request.excludes }),
      ...(request.gitignore === undefined ? {} : { gitignore: request.gitignore }),
    });
    const key = this.#keys.backup(id);
    const size = await bucketCall("Saving the backup", () => uploadStream(this.#bucket, key, archive, { customMetadata, contentType: ARCHIVE_MEDIA_TYPE }));
    // Its size is known once it is made: one that takes the sandbox past its bytes is not kept.
    if (before && quota.maxBytes !== undefined && before.totalBytes + size > quota.maxBytes) {
      await bucketCall("Removing the backup past the quota", () => this.#bucket.delete(key));
      throw quotaExceeded(`This backup (${size} bytes) would take the sandbox's backups past ${quota.maxBytes} bytes: delete some first`, quota, before);
    }
    return { id, size, createdAt, paths, ...fields };
  }

  /** The sandbox's backups (those with every one of `labels`, when given), oldest first; expired ones are gone. */
  async list(labels: readonly string[] = []): Promise<BackupInfo[]> {
    const now = Date.now();
    return (await this.#all()).filter((backup) => !expired(backup, now) && hasLabels(backup, labels));
  }

  async usage(): Promise<Omit<BackupUsage, "quota">> {
    const backups = await this.list();
    return { count: backups.length, totalBytes: backups.reduce((sum, backup) => sum + backup.size, 0) };
  }

  /** Removes expired backups from the bucket; when the next one expires (undefined: none will). */
  async removeExpired(): Promise<number | undefined> {
    const now = Date.now();
    const all = await this.#all();
    const gone = all.filter((backup) => expired(backup, now));
    if (gone.length > 0) await bucketCall("Removing expired backups", () => this.#bucket.delete(gone.map((backup) => this.#keys.backup(backup.id))));
    const next = all.filter((backup) => !expired(backup, now) && backup.expiresAt !== undefined).map((backup) => Date.parse(backup.expiresAt!));
    return next.length > 0 ? Math.min(...next) : undefined;
  }

  async #all(): Promise<BackupInfo[]> {
    const found: BackupInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await bucketCall("Listing backups", () =>
        this.#bucket.list({ prefix: this.#keys.backups, include: ["customMetadata"], ...(cursor === undefined ? {} : { cursor }) }),
      );
      for (const object of page.objects) found.push(describe(this.#keys.backupId(object.key), object));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor !== undefined);
    return found.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async get(id: string): Promise<BackupInfo> {
    const object = await bucketCall("Reading the backup", () => this.#bucket.head(this.#key(id)));
    if (!object || expired(describe(id, object))) throw notFound(id);
    return describe(id, object);
  }

  /** A backup's bytes, read in ranges as they are taken (a fork extracts them elsewhere). */
  async open(id: string): Promise<ReadableStream<Uint8Array>> {
    const found = await bucketCall("Reading the backup", () => openRanged(this.#bucket, this.#key(id)));
    if (!found) throw notFound(id);
    const backup = describe(id, found.object);
    if (expired(backup)) {
      await found.body.cancel();
      throw pastExpiry(backup);
    }
    return found.body;
  }

  /** Replaces the backup's paths in its folder (or `request.dir`, made when missing) with what it holds. */
  async restore(api: ContainerApi, id: string, request: RestoreBackupRequest = {}): Promise<RestoreBackupResult> {
    const found = await bucketCall("Reading the backup", () => openRanged(this.#bucket, this.#key(id)));
    if (!found) throw notFound(id);
    const backup = describe(id, found.object);
    if (expired(backup)) {
      await found.body.cancel();
      throw pastExpiry(backup);
    }
    const dir = request.dir ?? backup.dir;
    const entries = await bucketCall("Restoring the backup", () => extractReplacing(api, found.body, backup.paths, dir));
    return { success: true, id, ...(dir === undefined ? {} : { dir }), backup, entries };
  }

  async delete(id: string): Promise<DeleteBackupResult> {
    const key = this.#key(id);
    const object = await bucketCall("Reading the backup", () => this.#bucket.head(key));
    if (!object) throw notFound(id);
    await bucketCall("Deleting the backup", () => this.#bucket.delete(key));
    return { id };
  }

  /** The key of a backup of this sandbox: a malformed id is refused (never a key outside the prefix). */
  #key(id: string): string {
    if (!backupIdSchema.safeParse(id).success) {
      throw new SandboxError(`${JSON.stringify(String(id))} is not a backup id: createBackup returns a UUID`, "INVALID_REQUEST", { context: { backupId: String(id) } });
    }
    return this.#keys.backup(id);
  }
}
