/** Sessions and env vars as they cross between a caller and the Sandbox Durable Object or the /v1 API. */
import type { WithoutEnvelope } from "../../protocol/process.ts";
import type { DeleteSessionResponse } from "../../protocol/sessions.ts";

export interface CreateSessionOptions {
  /** Default: a generated id. */
  id?: string;
  /** Variables the session sets on top of the sandbox env. */
  env?: Record<string, string>;
  /** Starting directory (relative: against the workspace). */
  cwd?: string;
  /** Time limit (ms) of each command of the session that gives none of its own. */
  commandTimeoutMs?: number;
}

export type DeleteSessionResult = WithoutEnvelope<DeleteSessionResponse>;

/** Variables to set; `null` or `undefined` unsets one. */
export type EnvVarsUpdate = Record<string, string | null | undefined>;

export interface SetEnvOptions {
  /** Set the variables in this session only (default: for the whole sandbox). */
  sessionId?: string;
}
