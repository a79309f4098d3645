/**
 * When the default code contexts start: once the server has answered its first requests and been
 * quiet a moment, never in the middle of them. A sandbox's first command comes the moment the server
 * listens; two interpreters starting beside it would make it wait for the CPU on a small machine.
 * A server that is never quiet for that long starts them anyway after WARM_AT_THE_LATEST_MS.
 */
import type { OpenRequests } from "../http/open-requests.ts";

const QUIET_MS = 150;
const POLL_MS = 50;
const WARM_AT_THE_LATEST_MS = 2_000;

export function warmWhenQuiet(requests: OpenRequests, warm: () => void): void {
  const since = Date.now();
  const check = () => {
    if (requests.quietMs() >= QUIET_MS || Date.now() - since >= WARM_AT_THE_LATEST_MS) warm();
    else setTimeout(check, POLL_MS).unref();
  };
  setTimeout(check, QUIET_MS).unref();
}
