/** Git as it crosses between a caller and the Sandbox Durable Object or the /v1 API. */
import type { GitCloneResponse } from "../../protocol/git.ts";
import type { WithoutEnvelope } from "../../protocol/process.ts";

export interface GitCheckoutOptions {
  /** Branch or tag to check out (default: the repository's default branch). */
  branch?: string;
  /** Where to clone (relative: in the workspace). Default: the repository's name in the workspace. */
  targetDir?: string;
  /** Shallow clone of this many commits. */
  depth?: number;
  /** Time limit of the clone in milliseconds (default 10 minutes); the clone is killed when it runs out. */
  timeoutMs?: number;
  /** Clone as a command of this session (its env). */
  sessionId?: string;
}

export type GitCheckoutResult = WithoutEnvelope<GitCloneResponse>;
