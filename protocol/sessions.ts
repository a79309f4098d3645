/**
 * Sessions: named state (cwd and env) that commands start in and leave behind, without a long-lived
 * shell. A command run with `sessionId` starts in the session's cwd with the session's env layered
 * between the sandbox env and the call's own env; when it exits normally (any exit code, not killed
 * or timed out) the cwd it ended in and the exported variables it set or unset become the session's.
 *
 *   POST   /api/session            {id?, env?, cwd?}  → {session}   (409 SESSION_EXISTS)
 *   GET    /api/session/list                          → {sessions}
 *   GET    /api/session/{id}                          → {session}   (404 SESSION_NOT_FOUND)
 *   DELETE /api/session/{id}                          → {sessionId, killed}  kills its processes
 *
 * A command naming a session that does not exist creates it (empty env, the workspace as cwd), as
 * Cloudflare's sandbox API does; only the session routes answer 404 for an unknown id.
 */
import { z } from "zod";
import type { SuccessEnvelope } from "./process.ts";
import { withoutNul } from "./validation.ts";
import { idRoute } from "./route-path.ts";

export const SESSION_ROUTES = {
  create: "/api/session",
  list: "/api/session/list",
  /** GET and DELETE. */
  one: idRoute("/api/session/:id"),
  /** GET (`?sessionId=` for a session's) and POST (SetEnvRequest). */
  env: "/api/env",
} as const;

export const SESSION_LIMITS = {
  maxSessions: 1024,
  maxSessionIdLength: 128,
} as const;

/**
 * One word without whitespace or control characters. Wider than a name needs to be because Cloudflare's
 * Sandbox SDK names its default session after the sandbox (`sandbox-<id>`), whatever characters the
 * caller's id has (`/`, `+`, …). Ids travel escaped (in URLs, JSON) and never name a file.
 */
export const sessionIdSchema = z
  .string()
  .min(1)
  .max(SESSION_LIMITS.maxSessionIdLength)
  .regex(/^[^\s\x00-\x1f\x7f]+$/, "session ids are one word: no spaces or control characters");

/**
 * The session id Cloudflare's Sandbox SDK reserves for "no session". A command naming it runs as one
 * without a session: from a fresh state (the sandbox's env, the workspace), and it leaves none behind.
 */
export const NO_SESSION_ID = "__DISABLE_SESSION__";

/** The `sessionId` of a command: a session's id, or NO_SESSION_ID read as none. */
export const commandSessionIdSchema = sessionIdSchema.transform((id) => (id === NO_SESSION_ID ? undefined : id));

/** An environment variable name, wherever one is given (sandbox, session or command env). */
export const envNameSchema = z.string().regex(/^[^=\0]+$/, "env names cannot contain '=' or NUL");
/** An environment variable's value, wherever one is given: no NUL, which no process environment can hold. */
export const envValueSchema = withoutNul(z.string(), "env values");

/** Variables by name, wherever a set of them is given. */
export const envVarsSchema = z.record(envNameSchema, envValueSchema);

/**
 * The variables of one command (exec, execStream, startProcess) on top of the sandbox's and its
 * session's: a null value unsets that variable for the command, hiding the sandbox's and the
 * session's value from it; an undefined one (kept by Workers RPC, never in JSON) is no change.
 */
export const commandEnvVarsSchema = z.record(envNameSchema, envValueSchema.nullish());
export type CommandEnvVars = z.output<typeof commandEnvVarsSchema>;

export const createSessionRequestSchema = z.strictObject({
  id: sessionIdSchema.optional(),
  env: envVarsSchema.optional(),
  /** Starting directory (relative: against the workspace). Default: the workspace. */
  cwd: withoutNul(z.string().min(1).max(4096), "paths").optional(),
});
export type CreateSessionRequest = z.output<typeof createSessionRequestSchema>;

/**
 * `POST /api/env`: sandbox-level variables, or a session's with `sessionId`. A null value unsets the
 * variable (for a session: hides the sandbox's value from its commands).
 */
export const setEnvRequestSchema = z.strictObject({
  vars: z.record(envNameSchema, envValueSchema.nullable()),
  sessionId: sessionIdSchema.optional(),
});
export type SetEnvRequest = z.output<typeof setEnvRequestSchema>;

// ── responses ──────────────────────────────────────────────────────────────

export const sessionInfoSchema = z.object({
  id: z.string(),
  cwd: z.string(),
  /** Variables the session sets on top of the sandbox env. */
  env: z.record(z.string(), z.string()),
  /** Variables the session removed (e.g. with `unset`), hidden from its commands. */
  unsetEnv: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Live processes started in this session. */
  runningProcesses: z.number().int(),
});
export type SessionInfo = z.infer<typeof sessionInfoSchema>;

export const deleteSessionResultSchema = z.object({ sessionId: z.string(), killed: z.number().int() });

export type SessionResponse = SuccessEnvelope & { session: SessionInfo };
export type ListSessionsResponse = SuccessEnvelope & { sessions: SessionInfo[] };
export type DeleteSessionResponse = SuccessEnvelope & z.infer<typeof deleteSessionResultSchema>;
export type EnvResponse = SuccessEnvelope & { vars: Record<string, string>; sessionId?: string; unsetEnv?: string[] };
