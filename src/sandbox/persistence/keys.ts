/**
 * Where a sandbox's archives live in the bucket. Every key starts with the sandbox's own prefix, and
 * every lookup builds its key from that prefix and a checked id, so one sandbox can neither list nor
 * reach another's backups, whatever id it is given.
 *
 *   sandboxes/<sandbox>/backups/<uuid>.tar.gz       an explicit snapshot (its metadata on the object)
 *   sandboxes/<sandbox>/workspace/<uuid>.tar.gz     a save of the durable workspace
 *   sandboxes/<sandbox>/workspace/current.json      which save the next start restores
 */
export class BackupKeys {
  readonly #prefix: string;

  constructor(sandboxKey: string) {
    this.#prefix = `sandboxes/${sandboxKey}/`;
  }

  get backups(): string {
    return `${this.#prefix}backups/`;
  }

  backup(id: string): string {
    return `${this.backups}${id}.tar.gz`;
  }

  /** The id of a backup key found under `backups` (listings). */
  backupId(key: string): string {
    return key.slice(this.backups.length).replace(/\.tar\.gz$/, "");
  }

  save(id: string): string {
    return `${this.#prefix}workspace/${id}.tar.gz`;
  }

  get pointer(): string {
    return `${this.#prefix}workspace/current.json`;
  }
}
