/**
 * When the default code contexts (and bash's default options) are readied: once the server has
 * answered its first request and then been quiet a moment, never in the middle of it. A sandbox's
 * first command comes right after the server listens, behind readiness pings (which do not count);
 * two interpreters starting beside it would make it wait for the CPU on a small machine, so a server
 * waits for that command to be answered rather than for a pause before it. A server that is never
 * asked anything, or never quiet, readies them anyway after WARM_AT_THE_LATEST_MS. A server closed
 * by then readies nothing.
 */
import type { OpenRequests } from "../http/open-requests.ts";

const QUIET_MS = 150;
const POLL_MS = 50;
const WARM_AT_THE_LATEST_MS = 2_000;

export function warmWhenQuiet(requests: OpenRequests, stopped: AbortSignal, warm: () => void): void {
  const since = Date.now();
  const check = () => {
    if (stopped.aborted) return; // a server closed before it was quiet readies nothing
    const afterFirstAnswer = requests.answered > 0 && requests.quietMs() >= QUIET_MS;
    if (afterFirstAnswer || Date.now() - since >= WARM_AT_THE_LATEST_MS) warm();
    else setTimeout(check, POLL_MS).unref();
  };
  setTimeout(check, QUIET_MS).unref();
}
