/**
 * How a sandbox is known to hold a harness session. Every id names a sandbox of this service (one
 * is made on first use), so "resume a session that was never created" needs a mark: createSession
 * sets this variable in the sandbox's kept environment (its config, which outlives containers),
 * resumeSession looks for it, and destroy removes it. Commands see it; it holds only the session id.
 */
export const SESSION_MARKER = "EDGE_SANDBOX_HARNESS_SESSION";

/**
 * The session's ports, comma-separated, kept beside the mark: a preview URL lives only as long as its
 * container, so a session resumed after a stop (from any process) exposes them again from this list.
 */
export const SESSION_PORTS_MARKER = "EDGE_SANDBOX_HARNESS_PORTS";

export function portsMarkerValue(ports: readonly number[]): string {
  return ports.join(",");
}

export function parsePortsMarker(value: string): number[] {
  return value.split(",").filter((part) => /^\d+$/.test(part)).map(Number);
}
