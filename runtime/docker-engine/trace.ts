/**
 * A timeline of the engine's calls, for finding where a container's start spends its time: with
 * SANDBOX_ENGINE_TRACE=1 in the runtime's environment, each call to the engine and to a sidecar is
 * logged on stderr when it arrives and when it is answered, in milliseconds of the runtime's clock.
 * Off by default: nothing is measured or written then.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

export const ENGINE_TRACE_VAR = "SANDBOX_ENGINE_TRACE";

const enabled = process.env[ENGINE_TRACE_VAR] === "1";

const stamp = () => (performance.timeOrigin + performance.now()).toFixed(1);

/** Logs `what` (e.g. `engine GET /containers/x/json`) now and once `res` has finished. */
export function traceCall(what: string, req: IncomingMessage, res: ServerResponse): void {
  if (!enabled) return;
  const arrived = performance.now();
  console.error(`engine-trace ${stamp()} > ${what} (socket ${socketTag(req)})`);
  res.once("finish", () => console.error(`engine-trace ${stamp()} < ${what} ${res.statusCode} in ${(performance.now() - arrived).toFixed(1)} ms`));
}

/** Logs one event that has no answer of its own (a tunnel opened, a connection accepted). */
export function traceEvent(what: string): void {
  if (enabled) console.error(`engine-trace ${stamp()} - ${what}`);
}

const tags = new WeakMap<object, number>();
let nextTag = 1;
/** A number per connection, so a new connection (and so a new handshake) shows as a new number. */
function socketTag(req: IncomingMessage): number {
  let tag = tags.get(req.socket);
  if (tag === undefined) tags.set(req.socket, (tag = nextTag++));
  return tag;
}
