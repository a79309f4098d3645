/**
 * The changes waiting for one watch reader, bounded. Changes to a path already waiting are merged
 * into its entry (a create then writes stays one create; anything else: the latest kind wins), so a
 * file written a thousand times while the reader is slow costs one entry. Past `maxPending`
 * distinct paths, new ones are dropped and counted: the reader gets an `overflow` event with the
 * count and knows to look again, and memory stays bounded however fast the tree changes.
 */
import type { WatchChange } from "./tree-watcher.ts";

export class ChangeQueue {
  readonly #maxPending: number;
  /** Waiting changes by path, oldest first (a Map keeps insertion order). */
  readonly #pending = new Map<string, WatchChange & { timestamp: string }>();
  #dropped = 0;

  constructor(maxPending: number) {
    this.#maxPending = maxPending;
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Changes dropped since the last take. */
  get dropped(): number {
    return this.#dropped;
  }

  push(change: WatchChange): void {
    const timestamp = new Date().toISOString();
    const waiting = this.#pending.get(change.path);
    if (waiting) {
      if (!(waiting.kind === "create" && change.kind === "modify")) Object.assign(waiting, change);
      waiting.timestamp = timestamp;
      return;
    }
    if (this.#pending.size >= this.#maxPending) {
      this.#dropped++;
      return;
    }
    this.#pending.set(change.path, { ...change, timestamp });
  }

  /** Everything waiting, oldest first, and how many were dropped; the queue is empty after. */
  take(): { changes: (WatchChange & { timestamp: string })[]; dropped: number } {
    const changes = [...this.#pending.values()];
    const dropped = this.#dropped;
    this.#pending.clear();
    this.#dropped = 0;
    return { changes, dropped };
  }
}
