/**
 * A sandbox's durable workspace and snapshots, as its Durable Object drives them: which bucket and
 * paths (from the sandbox's config), saving when the container sleeps or is destroyed with
 * `keep: true`, restoring once per container before its first command, and what getInfo reports
 * (the last save, the last failure). The bucket is a binding of the Worker, named by the config
 * (default SANDBOX_BACKUPS): bindings cannot cross Workers RPC, their names can.
 *
 * Two guards keep a save from ever replacing good data with less: a container whose workspace was
 * not restored first is never saved (its workspace may be empty only because the restore failed),
 * and a failed save is recorded and retried at the next sleep while the container stays awake.
 */
import { DEFAULT_BACKUP_BUCKET, type PersistenceConfig, type PersistenceStatus } from "../../../protocol/backups.ts";
import { SandboxError } from "../../rpc/errors.ts";
import type { ContainerApi } from "../container-api.ts";
import { BackupStore } from "./backups.ts";
import { bucketCall } from "./failures.ts";
import { BackupKeys } from "./keys.ts";
import { WorkspaceSaves } from "./saves.ts";

const RESTORED_KEY = "persistence:restored";
const STATUS_KEY = "persistence:status";

type Recorded = Pick<PersistenceStatus, "lastSave" | "lastError">;

function isBucket(value: unknown): value is R2Bucket {
  return typeof value === "object" && value !== null && typeof (value as R2Bucket).createMultipartUpload === "function";
}

export class Persistence {
  readonly #storage: DurableObjectStorage;
  readonly #env: Record<string, unknown>;
  readonly #keys: BackupKeys;
  readonly #label: string;
  #config: PersistenceConfig | undefined;
  #restoring: { generation: string; done: Promise<void> } | undefined;

  constructor(storage: DurableObjectStorage, env: object, sandboxKey: string) {
    this.#storage = storage;
    this.#env = env as Record<string, unknown>;
    this.#keys = new BackupKeys(sandboxKey);
    this.#label = sandboxKey;
  }

  /** The sandbox's persistence settings (undefined or null: no durable workspace; snapshots still work). */
  configure(config: PersistenceConfig | null | undefined): void {
    this.#config = config ?? undefined;
  }

  get enabled(): boolean {
    return this.#config !== undefined;
  }

  /** PERSISTENCE_NOT_CONFIGURED unless the sandbox keeps a durable workspace. */
  assertEnabled(): void {
    if (this.enabled) return;
    throw new SandboxError("This sandbox keeps no durable workspace: configure persistence first", "PERSISTENCE_NOT_CONFIGURED", {
      context: { bucket: this.#bucketName },
    });
  }

  get #bucketName(): string {
    return this.#config?.bucket ?? DEFAULT_BACKUP_BUCKET;
  }

  /** The bucket, or PERSISTENCE_NOT_CONFIGURED naming the binding to add. */
  #bucket(): R2Bucket {
    const bucket = this.#env[this.#bucketName];
    if (isBucket(bucket)) return bucket;
    throw new SandboxError(
      `Backups need an R2 bucket binding named ${this.#bucketName} in the Worker (wrangler.toml: [[r2_buckets]] binding = "${this.#bucketName}")`,
      "PERSISTENCE_NOT_CONFIGURED",
      { context: { bucket: this.#bucketName } },
    );
  }

  backups(): BackupStore {
    return new BackupStore(this.#bucket(), this.#keys);
  }

  async status(): Promise<PersistenceStatus> {
    const recorded = (await this.#storage.get<Recorded>(STATUS_KEY)) ?? {};
    return {
      enabled: this.enabled,
      bucket: this.#bucketName,
      paths: this.#config?.paths ?? ["."],
      onSleep: this.#config?.onSleep ?? "save",
      ...recorded,
    };
  }

  /**
   * Restores the saved workspace into a container the first time it is used (once per generation,
   * remembered in storage so a Durable Object woken beside a running container does not restore over
   * live work). A failure fails the call and is tried again on the next one.
   */
  async restoreOnce(api: ContainerApi, generation: string): Promise<void> {
    if (!this.enabled) return;
    // Set before any await: calls that arrive together share one restore.
    if (this.#restoring?.generation !== generation) {
      const done = (async () => {
        if ((await this.#storage.get<string>(RESTORED_KEY)) === generation) return;
        const saves = new WorkspaceSaves(this.#bucket(), this.#keys);
        await bucketCall("Restoring the durable workspace", () => saves.restore(api));
        await this.#storage.put(RESTORED_KEY, generation);
      })();
      this.#restoring = { generation, done };
    }
    const restoring = this.#restoring!;
    try {
      await restoring.done;
    } catch (error) {
      if (this.#restoring === restoring) this.#restoring = undefined;
      throw error;
    }
  }

  /**
   * Persistence turned on beside a running container: its workspace is the one to keep from now on,
   * so it counts as restored (an older save must not be put back over live work).
   */
  async adopt(generation: string): Promise<void> {
    await this.#storage.put(RESTORED_KEY, generation);
  }

  /**
   * Saves the workspace of the running container (generation `generation`) before it sleeps. True
   * when it may sleep: saved, or nothing to save. False when the save failed (recorded and logged):
   * the container stays awake and the next expiry tries again.
   */
  async saveBeforeSleep(api: ContainerApi, generation: string): Promise<boolean> {
    if (!this.enabled || this.#config?.onSleep === "none") return true;
    try {
      await this.save(api, generation);
      return true;
    } catch (error) {
      console.error(`sandbox ${this.#label}: saving the durable workspace failed, staying awake to try again:`, error instanceof Error ? error.message : error);
      return false;
    }
  }

  /** Saves now (destroy with keep, or sleep); throws BACKUP_FAILED after recording the failure. */
  async save(api: ContainerApi, generation: string): Promise<void> {
    this.assertEnabled();
    // A container that never had its workspace restored holds no more than a part of it.
    if ((await this.#storage.get<string>(RESTORED_KEY)) !== generation) return;
    const saves = new WorkspaceSaves(this.#bucket(), this.#keys);
    try {
      const pointer = await bucketCall("Saving the durable workspace", () => saves.save(api, this.#config?.paths));
      await this.#storage.put<Recorded>(STATUS_KEY, { lastSave: { id: pointer.id, size: pointer.size, savedAt: pointer.savedAt } });
    } catch (error) {
      const recorded = (await this.#storage.get<Recorded>(STATUS_KEY)) ?? {};
      const attempts = (recorded.lastError?.attempts ?? 0) + 1;
      const message = error instanceof Error ? error.message : String(error);
      await this.#storage.put<Recorded>(STATUS_KEY, { ...recorded, lastError: { message, at: new Date().toISOString(), attempts } });
      throw error;
    }
  }

  /** destroy() without keep: the durable workspace is forgotten (snapshots stay until deleted). */
  async discard(): Promise<void> {
    await this.#storage.delete([RESTORED_KEY, STATUS_KEY]);
    this.#restoring = undefined;
    if (!this.enabled) return;
    await bucketCall("Discarding the durable workspace", () => new WorkspaceSaves(this.#bucket(), this.#keys).discard());
  }
}
