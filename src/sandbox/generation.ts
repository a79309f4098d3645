/**
 * Container generations. Each container server mints an `instanceId` at boot (its ping says so); the
 * Durable Object numbers the instances it has seen, in storage, so it survives its own eviction.
 * Process records carry the instance id; a handle that names an older one is stale.
 */
import type { PingResponse } from "../../protocol/process.ts";
import { StaleProcessHandleError } from "../rpc/errors.ts";
import type { HandleRef } from "../rpc/processes.ts";

const STORAGE_KEY = "sandbox:generation";

export interface Generation {
  instanceId: string;
  /** 1 for the first container this sandbox ran, +1 for each restart. */
  number: number;
  startedAt: string;
}

export class GenerationTracker {
  readonly #storage: DurableObjectStorage;
  #current: Promise<Generation> | undefined;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /** Whether this sandbox has ever run a container. */
  async everRan(): Promise<boolean> {
    return (await this.#storage.get<Generation>(STORAGE_KEY)) !== undefined;
  }

  /**
   * Forget the running generation (the container started or stopped); the next call pings again,
   * unless `answered` is the new container's ping already (its readiness probe's answer).
   */
  reset(answered?: PingResponse): void {
    this.#current = answered ? this.#forget(this.#resolve(async () => answered)) : undefined;
  }

  current(ping: () => Promise<PingResponse>): Promise<Generation> {
    return (this.#current ??= this.#forget(this.#resolve(ping)));
  }

  /** A generation that could not be known is forgotten, so the next call asks again. */
  #forget(pending: Promise<Generation>): Promise<Generation> {
    pending.catch(() => {
      if (this.#current === pending) this.#current = undefined;
    });
    return pending;
  }

  async #resolve(ping: () => Promise<PingResponse>): Promise<Generation> {
    const { instanceId } = await ping();
    const stored = await this.#storage.get<Generation>(STORAGE_KEY);
    if (stored?.instanceId === instanceId) return stored;
    const next: Generation = { instanceId, number: (stored?.number ?? 0) + 1, startedAt: new Date().toISOString() };
    // The command that follows need not wait for the commit: handles name the instance id, which the
    // container itself reports; a lost write (the object is reset then) numbers the same instance again.
    await this.#storage.put(STORAGE_KEY, next, { allowUnconfirmed: true });
    return next;
  }
}

/** Throws STALE_PROCESS_HANDLE when the handle belongs to another container generation. */
export function assertSameGeneration(ref: HandleRef | undefined, current: Generation, processId: string): void {
  if (ref?.generation === undefined || ref.generation === current.instanceId) return;
  throw new StaleProcessHandleError(
    `Process "${processId}" belonged to an earlier container of this sandbox, which has since restarted ` +
      `(now generation ${current.number}); the process is gone. Start it again or look it up by id.`,
    { context: { processId, handleGeneration: ref.generation, currentGeneration: current.instanceId } },
  );
}

/** How long a container may take to answer whether it is still the same one, before it counts as still there. */
const STILL_THERE_TIMEOUT_MS = 5_000;

/**
 * Whether the container of `generation` still answers as itself: false when it does not answer at
 * all or another instance does. A container too slow to answer counts as still there.
 */
export async function stillThere(ping: () => Promise<PingResponse>, generation: Generation): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const slow = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STILL_THERE_TIMEOUT_MS)));
  const answer = ping().then(
    ({ instanceId }) => instanceId === generation.instanceId,
    () => false,
  );
  try {
    return await Promise.race([answer, slow]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
