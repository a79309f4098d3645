/**
 * Requests the server is answering now, streams among them (an exec stream, a log follower, a
 * preview port's long poll). With live processes and terminals it tells whether anyone is using the
 * sandbox: what the local runtime asks before it puts an idle sandbox to sleep to make room.
 */
import type { ServerResponse } from "node:http";

export class OpenRequests {
  #count = 0;

  get count(): number {
    return this.#count;
  }

  /** Counts `res` until it is finished or its connection goes. */
  track(res: ServerResponse): void {
    this.#count++;
    res.once("close", () => this.#count--);
  }
}
