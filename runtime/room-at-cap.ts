/**
 * Room at the cap for starts that find it at the same time. Each start reserves a sleeper of its
 * own: the idlest sandbox no other start has reserved, so a burst of N on a full pool of idle
 * sandboxes puts N of them to sleep, never the same one N times. Starts that arrive while the
 * servers are being asked join that one survey rather than each asking every server again.
 */
import type { ContainerProcess } from "./container-process.ts";
import { idleRanking } from "./idle.ts";

export class RoomAtCap {
  readonly #minQuietMs: number;
  /** Sandboxes some start has chosen to put to sleep, until they are gone. */
  readonly #reserved = new Set<ContainerProcess>();
  /** The survey under way: the idle sandboxes, idlest first. */
  #survey: Promise<ContainerProcess[]> | undefined;

  constructor(minQuietMs: number) {
    this.#minQuietMs = minQuietMs;
  }

  /**
   * Reserves the idlest of `live` (but the start's own key) that no one else has: undefined when
   * none is idle. The caller releases it once it has gone.
   */
  async reserve(live: () => ContainerProcess[], key: string): Promise<ContainerProcess | undefined> {
    this.#survey ??= idleRanking(live(), this.#minQuietMs).finally(() => (this.#survey = undefined));
    const ranked = await this.#survey;
    // Taken after the await, in one step: no two starts can pick the same one.
    const chosen = ranked.find((container) => container.key !== key && container.running && !container.stopping && !this.#reserved.has(container));
    if (chosen) this.#reserved.add(chosen);
    return chosen;
  }

  release(container: ContainerProcess): void {
    this.#reserved.delete(container);
  }
}
