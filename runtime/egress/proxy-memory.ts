/**
 * The memory the proxy holds for sandboxes: bytes read from one side of a connection and not yet
 * written to the other, counted per sandbox and for the runtime (PROXY_LIMITS). A connection whose
 * sandbox, or the runtime, is past its share holds little (`bufferedWhenOver`) before it stops
 * reading, so what the proxy holds stays near the ceiling however many connections a sandbox makes
 * and however little of its answers it reads. A read's room is claimed before the read comes, since
 * a socket's next read is sized when the one before it ends: without the claim, every connection of
 * a sandbox could take a large read sized before its buffers were spent. Streams are charged to a sandbox's budget where they
 * are accepted (connection.ts); the relay finds the budget from either end (inbound.ts).
 */
import { PROXY_LIMITS } from "./proxy-limits.ts";

export class ByteBudget {
  readonly limit: number;
  readonly #parent: ByteBudget | undefined;
  #held = 0;
  /** Room of reads under way: what they may bring is counted before it comes. */
  #claimed = 0;

  constructor(limit: number, parent?: ByteBudget) {
    this.limit = limit;
    this.#parent = parent;
  }

  get held(): number {
    return this.#held;
  }

  /** Past its limit, or its parent past its own. */
  get over(): boolean {
    return this.#held + this.#claimed >= this.limit || (this.#parent?.over ?? false);
  }

  hold(bytes: number): void {
    this.#held += bytes;
    this.#parent?.hold(bytes);
  }

  free(bytes: number): void {
    this.#held -= bytes;
    this.#parent?.free(bytes);
  }

  /** A read of up to `bytes` is under way for a connection charged here. */
  claim(bytes: number): void {
    this.#claimed += bytes;
    this.#parent?.claim(bytes);
  }

  /** That read came (its bytes are held as they are taken), or will not. */
  unclaim(bytes: number): void {
    this.#claimed -= bytes;
    this.#parent?.unclaim(bytes);
  }

  /** What a connection charged here may hold unsent before its source pauses. */
  get allowance(): number {
    return this.over ? PROXY_LIMITS.bufferedWhenOver : PROXY_LIMITS.bufferedPerConnection;
  }
}

/** Every sandbox's buffers together. */
export const RUNTIME_BUFFERS = new ByteBudget(PROXY_LIMITS.bufferedTotal);

const charged = new WeakMap<object, ByteBudget>();

/** Bytes relayed from or to `stream` count against `budget`. */
export function chargeTo(stream: object, budget: ByteBudget): void {
  charged.set(stream, budget);
}

/** The budget `stream` is charged to, if any. */
export function budgetOf(stream: object): ByteBudget | undefined {
  return charged.get(stream);
}
