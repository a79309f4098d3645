/**
 * The durable workspace's saves in the bucket. A save never half-writes: the archive goes to a fresh
 * key, and only once it is whole there does the small pointer object switch to it; then the save it
 * replaced is removed. A save that fails leaves the pointer, and so the previous save, as it was.
 */
import { ARCHIVE_MEDIA_TYPE } from "../../../protocol/archive.ts";
import type { ContainerApi } from "../container-api.ts";
import { extractReplacing, openArchive } from "./archive-io.ts";
import { openRanged } from "./download.ts";
import type { BackupKeys } from "./keys.ts";
import { uploadStream } from "./upload.ts";

/** The pointer object: which save the next start restores. */
export interface SavePointer {
  id: string;
  size: number;
  savedAt: string;
  paths: string[];
}

export class WorkspaceSaves {
  readonly #bucket: R2Bucket;
  readonly #keys: BackupKeys;

  constructor(bucket: R2Bucket, keys: BackupKeys) {
    this.#bucket = bucket;
    this.#keys = keys;
  }

  async current(): Promise<SavePointer | null> {
    const object = await this.#bucket.get(this.#keys.pointer);
    return object ? ((await object.json()) as SavePointer) : null;
  }

  async save(api: ContainerApi, paths: readonly string[] | undefined): Promise<SavePointer> {
    const previous = await this.current();
    const id = crypto.randomUUID();
    const archive = await openArchive(api, paths === undefined ? {} : { paths: [...paths] });
    const size = await uploadStream(this.#bucket, this.#keys.save(id), archive, { contentType: ARCHIVE_MEDIA_TYPE });
    const pointer: SavePointer = { id, size, savedAt: new Date().toISOString(), paths: [...(paths ?? ["."])] };
    await this.#bucket.put(this.#keys.pointer, JSON.stringify(pointer), { httpMetadata: { contentType: "application/json" } });
    if (previous && previous.id !== id) await this.#bucket.delete(this.#keys.save(previous.id)).catch(() => undefined);
    return pointer;
  }

  /** Restores the current save into the workspace; null when there is none. */
  async restore(api: ContainerApi): Promise<SavePointer | null> {
    const pointer = await this.current();
    if (!pointer) return null;
    const found = await openRanged(this.#bucket, this.#keys.save(pointer.id));
    if (!found) throw new Error(`the saved workspace ${pointer.id} named by the pointer is missing from the bucket`);
    await extractReplacing(api, found.body, pointer.paths);
    return pointer;
  }

  /** Forgets the durable workspace: the next start begins empty. */
  async discard(): Promise<void> {
    const pointer = await this.current();
    await this.#bucket.delete(this.#keys.pointer);
    if (pointer) await this.#bucket.delete(this.#keys.save(pointer.id));
  }
}
