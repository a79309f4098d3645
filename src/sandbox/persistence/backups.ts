/**
 * Explicit snapshots of a sandbox: createBackup streams a workspace archive from the container into
 * the bucket (never whole in memory: upload.ts), listBackups reads the sandbox's own prefix,
 * restoreBackup streams one back into the running container, deleteBackup removes it. What a backup
 * is (name, paths, time) travels as the object's metadata, so the object is the whole record: a
 * backup exists exactly when its upload completed.
 */
import { ARCHIVE_MEDIA_TYPE } from "../../../protocol/archive.ts";
import { backupIdSchema, type BackupInfo, type CreateBackupRequest, type DeleteBackupResult, type RestoreBackupResult } from "../../../protocol/backups.ts";
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

/** Metadata of a backup object → its record. */
function describe(id: string, object: R2Object): BackupInfo {
  const meta = object.customMetadata ?? {};
  return {
    id,
    size: object.size,
    createdAt: meta.createdAt ?? object.uploaded.toISOString(),
    ...(meta.name === undefined ? {} : { name: meta.name }),
    paths: meta.paths ? (JSON.parse(meta.paths) as string[]) : ["."],
  };
}

export class BackupStore {
  readonly #bucket: R2Bucket;
  readonly #keys: BackupKeys;

  constructor(bucket: R2Bucket, keys: BackupKeys) {
    this.#bucket = bucket;
    this.#keys = keys;
  }

  async create(api: ContainerApi, request: CreateBackupRequest): Promise<BackupInfo> {
    const id = crypto.randomUUID();
    const createdAt = new Date().toISOString();
    const paths = request.paths ?? ["."];
    const customMetadata: Record<string, string> = { createdAt, paths: JSON.stringify(paths), ...(request.name === undefined ? {} : { name: request.name }) };
    const archive = await openArchive(api, request.paths === undefined ? {} : { paths: request.paths });
    const size = await bucketCall("Saving the backup", () =>
      uploadStream(this.#bucket, this.#keys.backup(id), archive, { customMetadata, contentType: ARCHIVE_MEDIA_TYPE }),
    );
    return { id, size, createdAt, ...(request.name === undefined ? {} : { name: request.name }), paths };
  }

  async list(): Promise<BackupInfo[]> {
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
    if (!object) throw notFound(id);
    return describe(id, object);
  }

  /** Replaces the backup's paths in the workspace with what it holds. */
  async restore(api: ContainerApi, id: string): Promise<RestoreBackupResult> {
    const found = await bucketCall("Reading the backup", () => openRanged(this.#bucket, this.#key(id)));
    if (!found) throw notFound(id);
    const backup = describe(id, found.object);
    const entries = await bucketCall("Restoring the backup", () => extractReplacing(api, found.body, backup.paths));
    return { backup, entries };
  }

  async delete(id: string): Promise<DeleteBackupResult> {
    const key = this.#key(id);
    const object = await bucketCall("Reading the backup", () => this.#bucket.head(key));
    if (!object) throw notFound(id);
    await bucketCall("Deleting the backup", () => this.#bucket.delete(key));
    return { id };
  }

  /** The key of a backup of this sandbox: a malformed id names none (never a key outside the prefix). */
  #key(id: string): string {
    if (!backupIdSchema.safeParse(id).success) throw notFound(String(id));
    return this.#keys.backup(id);
  }
}
