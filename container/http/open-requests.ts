/**
 * Requests the server is answering now, streams among them (an exec stream, a log follower, a
 * preview port's long poll). With live processes and terminals it tells whether anyone is using the
 * sandbox: what the local runtime asks before it puts an idle sandbox to sleep to make room. Asking
 * that (OBSERVING_ROUTES) is not counted, so callers asking at once never make each other busy.
 */
import type { ServerResponse } from "node:http";
import { OBSERVING_ROUTES } from "../../protocol/info.ts";

/** Whether a request only looks at the sandbox (its status, its activity): such a one is not counted. */
export function isObserving(url: string | undefined): boolean {
  return OBSERVING_ROUTES.has((url ?? "").split("?", 1)[0]!);
}

export class OpenRequests {
  #count = 0;
  #answered = 0;
  /** When the last request ended (at first: when the server began serving). */
  #quietSince = Date.now();

  get count(): number {
    return this.#count;
  }

  /** Requests (and sockets) that have ended since the server began serving. */
  get answered(): number {
    return this.#answered;
  }

  /** How long no request has been open, in ms. */
  quietMs(): number {
    return this.#count > 0 ? 0 : Date.now() - this.#quietSince;
  }

  /** Counts an upgraded connection (a preview port's WebSocket) as a request until it closes. */
  trackSocket(socket: { once(event: "close", listener: () => void): unknown }): void {
    this.#count++;
    socket.once("close", () => {
      this.#count--;
      this.#answered++;
      this.#quietSince = Date.now();
    });
  }

  /** Counts `res` until it is finished or its connection goes. */
  track(res: ServerResponse): void {
    this.#count++;
    res.once("close", () => {
      this.#count--;
      this.#answered++;
      this.#quietSince = Date.now();
    });
  }
}
