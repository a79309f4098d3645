/**
 * How many watches one server keeps open at once. Each holds inotify watches and a descriptor per
 * directory it follows: without a bound, one sandbox opening watch after watch would exhaust the
 * server's descriptors and make every call fail. Past the limit a watch is TOO_MANY_WATCHES.
 */
import { ServiceError } from "../../server-kit/service-error.ts";

export class WatchSlots {
  readonly #limit: () => number;
  #open = 0;

  constructor(limit: () => number) {
    this.#limit = limit;
  }

  get open(): number {
    return this.#open;
  }

  /** Takes a slot (or throws); the returned function gives it back, once. */
  acquire(): () => void {
    const limit = this.#limit();
    if (this.#open >= limit) {
      throw new ServiceError("TOO_MANY_WATCHES", `too many open watches (limit ${limit}): stop one first`, { limit });
    }
    this.#open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open--;
    };
  }
}
