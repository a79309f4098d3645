/**
 * The work running in a sandbox, as the Durable Object asks for it before letting the sandbox sleep
 * (`GET /api/info` `activity.work`, protocol/keep-alive.ts): processes that keep it awake, code
 * cells, live terminals, requests being answered. And for how long none of it has run: a clock
 * samples the counts once a second (and at each report), so when the last piece of work ended is
 * known to about a second without every kind of work having to say when it ends.
 */
import type { ContainerWork } from "../../protocol/keep-alive.ts";

/** How often the counts are sampled: the resolution of `idleMs`. */
const SAMPLE_MS = 1_000;

export class WorkClock {
  /** The counts now. */
  readonly #count: () => ContainerWork;
  readonly #timer: NodeJS.Timeout;
  #lastBusyAt = Date.now();

  constructor(count: () => ContainerWork) {
    this.#count = count;
    this.#timer = setInterval(() => this.#sample(), SAMPLE_MS);
    this.#timer.unref();
  }

  /** The work now, and for how long there has been none (0 while there is). */
  report(): { work: ContainerWork; workIdleMs: number } {
    const work = this.#sample();
    return { work, workIdleMs: busy(work) ? 0 : Date.now() - this.#lastBusyAt };
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #sample(): ContainerWork {
    const work = this.#count();
    if (busy(work)) this.#lastBusyAt = Date.now();
    return work;
  }
}

function busy(work: ContainerWork): boolean {
  return work.processes + work.codeCells + work.terminals + work.requests > 0;
}
