/**
 * Sessions: named shell state that commands start in and leave behind, without a long-lived shell:
 * cwd, exported and unset variables, shell functions, aliases and shell options (`set -o`, `shopt`).
 * A command starts in its session's cwd with the session's env layered between the sandbox env and
 * the call's own env, and its functions, aliases and options defined; when it exits normally (any
 * exit code, not killed or timed out) what it changed of that state becomes the session's.
 *
 * Every sandbox has a default session (DEFAULT_SESSION_ID): a command that names no session runs in
 * it, so `cd app` then `npm test` runs in `app`. `isolated: true` (or Cloudflare's NO_SESSION_ID)
 * runs a command from a clean state that it leaves nowhere.
 *
 *   POST   /api/session            {id?, env?, cwd?}  → {session}   (409 SESSION_EXISTS)
 *   GET    /api/session/list                          → {sessions}
 *   GET    /api/session/{id}                          → {session}   (404 SESSION_NOT_FOUND)
 *   DELETE /api/session/{id}                          → {sessionId, killed}  kills its processes
 *
 * A command naming a session that does not exist creates it (empty env, the workspace as cwd), as
 * Cloudflare's sandbox API does; only the session routes answer 404 for an unknown id. The default
 * session is always listed; deleting it kills its processes and leaves a fresh default in its place.
 */
import * as z from "zod";
import type { SuccessEnvelope } from "./envelope.ts";
import { withoutNul } from "./validation.ts";
import { idRoute } from "./route-path.ts";
import { LIMITS } from "./limits.ts";
import { lazySchema } from "./lazy-schema.ts";

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
  /**
   * Functions, aliases and options a session carries, as the script that restores them. It reaches
   * each command in one environment variable, and the kernel refuses an exec with a single
   * environment string over 128 KiB: a change that would make it larger is not carried.
   */
  maxShellStateBytes: 96 * 1024,
} as const;

/**
 * The session a command runs in when it names none. Cloudflare's Durable Object names its default
 * session after the sandbox (`sandbox-<id>`) and sends that id with every command; a container
 * server does not know its sandbox's name, and one fixed id reads the same on every sandbox.
 */
export const DEFAULT_SESSION_ID = "default";

/**
 * One word without whitespace or control characters. Wider than a name needs to be because Cloudflare's
 * Sandbox SDK names its default session after the sandbox (`sandbox-<id>`), whatever characters the
 * caller's id has (`/`, `+`, …). Ids travel escaped (in URLs, JSON) and never name a file.
 */
export const sessionIdSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(SESSION_LIMITS.maxSessionIdLength)
  .regex(/^[^\s\x00-\x1f\x7f]+$/, "session ids are one word: no spaces or control characters"));

/**
 * The session id Cloudflare's Sandbox SDK reserves for "no session". A command naming it runs as one
 * without a session: from a fresh state (the sandbox's env, the workspace), and it leaves none behind.
 */
export const NO_SESSION_ID = "__DISABLE_SESSION__";

/** The `sessionId` of a command: a session's id, or NO_SESSION_ID read as none. */
export const commandSessionIdSchema = lazySchema(() => sessionIdSchema.transform((id) => (id === NO_SESSION_ID ? undefined : id)));

/**
 * The session a command runs in: the one it names, none when it asks to be isolated (or names
 * NO_SESSION_ID), else the default session. Naming a session and asking for isolation is refused
 * where the request is read (a caller asking for both has a bug worth hearing about).
 */
export function commandSessionOf(request: { sessionId?: string | undefined; isolated?: boolean | undefined }): string | undefined {
  if (request.isolated === true || request.sessionId === NO_SESSION_ID) return undefined;
  return request.sessionId ?? DEFAULT_SESSION_ID;
}

/** True when a request both names a session and asks to be isolated. */
export function isolatedInSession(request: { sessionId?: string | undefined; isolated?: boolean | undefined }): boolean {
  return request.isolated === true && request.sessionId !== undefined && request.sessionId !== NO_SESSION_ID;
}

/** A session's default time limit for its commands (Cloudflare's createSession option). */
export const sessionCommandTimeoutSchema = lazySchema(() => z.number().int().positive().max(LIMITS.maxTimeoutMs));

/** An environment variable name, wherever one is given (sandbox, session or command env). */
export const envNameSchema = lazySchema(() => z.string().regex(/^[^=\0]+$/, "env names cannot contain '=' or NUL"));
/** An environment variable's value, wherever one is given: no NUL, which no process environment can hold. */
export const envValueSchema = lazySchema(() => withoutNul(z.string(), "env values"));

/** Variables by name, wherever a set of them is given. */
export const envVarsSchema = lazySchema(() => z.record(envNameSchema, envValueSchema));

/**
 * The variables of one command (exec, execStream, startProcess) on top of the sandbox's and its
 * session's: a null value unsets that variable for the command, hiding the sandbox's and the
 * session's value from it; an undefined one (kept by Workers RPC, never in JSON) is no change.
 */
export const commandEnvVarsSchema = lazySchema(() => z.record(envNameSchema, envValueSchema.nullish()));
export type CommandEnvVars = z.output<typeof commandEnvVarsSchema>;

export const createSessionRequestSchema = lazySchema(() => z.strictObject({
  id: sessionIdSchema.optional(),
  env: envVarsSchema.optional(),
  /** Starting directory (relative: against the workspace). Default: the workspace. */
  cwd: withoutNul(z.string().min(1).max(4096), "paths").optional(),
  /** Time limit (ms) of each command of the session that gives none of its own. */
  commandTimeoutMs: sessionCommandTimeoutSchema.optional(),
}));
export type CreateSessionRequest = z.output<typeof createSessionRequestSchema>;

/**
 * `POST /api/env`: sandbox-level variables, or a session's with `sessionId`. A null value unsets the
 * variable (for a session: hides the sandbox's value from its commands).
 */
export const setEnvRequestSchema = lazySchema(() => z.strictObject({
  vars: z.record(envNameSchema, envValueSchema.nullable()),
  sessionId: sessionIdSchema.optional(),
}));
export type SetEnvRequest = z.output<typeof setEnvRequestSchema>;

// ── responses ──────────────────────────────────────────────────────────────

export const sessionInfoSchema = lazySchema(() => z.object({
  id: z.string(),
  cwd: z.string(),
  /** Variables the session sets on top of the sandbox env. */
  env: z.record(z.string(), z.string()),
  /** Variables the session removed (e.g. with `unset`), hidden from its commands. */
  unsetEnv: z.array(z.string()),
  /** Time limit (ms) of each command of the session that gives none of its own. */
  commandTimeoutMs: z.number().int().optional(),
  /** Names of the shell functions and aliases the session carries. */
  functions: z.array(z.string()).optional(),
  aliases: z.array(z.string()).optional(),
  /** Shell options the session sets away from bash's defaults, as the commands that set them (`set -o pipefail`, `shopt -s globstar`). */
  shellOptions: z.array(z.string()).optional(),
  /** True for the sandbox's default session. */
  isDefault: z.boolean().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Live processes started in this session. */
  runningProcesses: z.number().int(),
}));
export type SessionInfo = z.infer<typeof sessionInfoSchema>;

export const deleteSessionResultSchema = lazySchema(() => z.object({ sessionId: z.string(), killed: z.number().int() }));

export type SessionResponse = SuccessEnvelope & { session: SessionInfo };
export type ListSessionsResponse = SuccessEnvelope & { sessions: SessionInfo[] };
export type DeleteSessionResponse = SuccessEnvelope & z.infer<typeof deleteSessionResultSchema>;
export type EnvResponse = SuccessEnvelope & { vars: Record<string, string>; sessionId?: string; unsetEnv?: string[] };
