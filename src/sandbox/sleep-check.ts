/**
 * What the Durable Object asks of its container when its activity timeout expires: whether the
 * sandbox may sleep (the container's own report of work, judged by keep-alive.ts through Activity),
 * and what must be kept before it does (the process ledger, a durable workspace's save).
 */
import { INFO_ROUTES, type InfoResponse } from "../../protocol/info.ts";
import type { Activity } from "./activity.ts";
import type { ContainerApi } from "./container-api.ts";
import type { Persistence } from "./persistence/persistence.ts";
import type { ProcessLedger } from "./process-ledger.ts";
import type { KeepAliveReading } from "./shell.ts";

export interface SleepCheckParts {
  sandboxId: string;
  activity: Activity;
  ledger: ProcessLedger;
  persistence: Persistence;
  /** Whether a container runs now. */
  running(): boolean;
  /** The running container's server. */
  api(): ContainerApi;
}

export class SleepCheck {
  readonly #parts: SleepCheckParts;

  constructor(parts: SleepCheckParts) {
    this.#parts = parts;
  }

  /** Whether the sandbox sleeps now (see SandboxShell.keepAliveReading); the container is asked unless a report is given. */
  async reading(sleepAfter: string | number, report?: Pick<InfoResponse, "activity" | "uptimeMs">, asking = 0): Promise<KeepAliveReading> {
    let answered = report;
    if (!answered && this.#parts.running()) {
      try {
        answered = await this.#parts.api().json<InfoResponse>("GET", INFO_ROUTES.info);
      } catch {
        // Not answering: no work of it is known, and keeping it awake keeps nothing.
      }
    }
    return this.#parts.activity.reading(sleepAfter, answered, asking);
  }

  /** Keeps what the running container's processes did (best effort: a container not answering has nothing to give). */
  async keepLedger(): Promise<void> {
    if (!this.#parts.running()) return;
    try {
      const api = this.#parts.api();
      await this.#parts.ledger.keep(api, await api.instanceId());
    } catch (error) {
      console.error(`sandbox ${this.#parts.sandboxId}: keeping the process logs failed:`, error instanceof Error ? error.message : error);
    }
  }

  /**
   * Saves a durable workspace before the container sleeps. False when the sandbox must stay awake:
   * the save failed (the next expiry tries again), or a call came in while saving (it is in use again).
   */
  async readyToSleep(): Promise<boolean> {
    if (!this.#parts.running() || !this.#parts.persistence.enabled) return true;
    const calls = this.#parts.activity.calls;
    let saved: boolean;
    try {
      const api = this.#parts.api();
      saved = await this.#parts.persistence.saveBeforeSleep(api, await api.instanceId());
    } catch {
      // The container is not answering: nothing of it can be saved, and keeping it awake saves nothing either.
      saved = true;
    }
    return saved && this.#parts.activity.calls === calls;
  }
}
