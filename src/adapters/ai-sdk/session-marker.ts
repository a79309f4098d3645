/**
 * How a sandbox is known to hold a harness session. Every id names a sandbox of this service (one
 * is made on first use), so "resume a session that was never created" needs a mark: createSession
 * sets this variable in the sandbox's kept environment (its config, which outlives containers),
 * resumeSession looks for it, and destroy removes it. Commands see it; it holds only the session id.
 */
export const SESSION_MARKER = "EDGE_SANDBOX_HARNESS_SESSION";
