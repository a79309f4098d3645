/**
 * Room at the cap for starts that find it at the same time. Each start reserves a sleeper of its
 * own: the idlest sandbox no other start has reserved, so a burst of N on a full pool of idle
 * sandboxes puts N of them to sleep, never the same one N times. Starts that arrive while the
 * servers are being asked join that one survey rather than each asking every server again.
 */
import type { ContainerProcess } from "./container-process.ts";
import { idleRanking, type IdleSurvey } from "./idle.ts";

/** Surveys a start makes while some servers leave it unanswered, before it counts them busy. */
const SURVEYS_WHILE_UNANSWERED = 3;

export class RoomAtCap {
  readonly #minQuietMs: number;
  /** Sandboxes some start has chosen to put to sleep, until they are gone. */
  readonly #reserved = new Set<ContainerProcess>();
  /** The survey under way: the idle sandboxes, idlest first. */
  #survey: Promise<IdleSurvey> | undefined;

  constructor(minQuietMs: number) {
    this.#minQuietMs = minQuietMs;
  }

  /**
   * Reserves the idlest of `live` (but the start's own key) that no one else has: undefined when
   * none is idle. Servers that did not answer in time are asked again (a busy machine answers late)
   * before the start is refused. The caller releases the sandbox once it has gone.
   */
  async reserve(live: () => ContainerProcess[], key: string): Promise<ContainerProcess | undefined> {
    for (let survey = 1; ; survey++) {
      this.#survey ??= idleRanking(live(), this.#minQuietMs).finally(() => (this.#survey = undefined));
      const { idle, unanswered } = await this.#survey;
      // Taken after the await, in one step: no two starts can pick the same one.
      const chosen = idle.find((container) => container.key !== key && container.running && !container.stopping && !this.#reserved.has(container));
      if (chosen) {
        this.#reserved.add(chosen);
        return chosen;
      }
      if (unanswered === 0 || survey === SURVEYS_WHILE_UNANSWERED) return undefined;
    }
  }

  release(container: ContainerProcess): void {
    this.#reserved.delete(container);
  }
}
