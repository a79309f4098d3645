/**
 * Git on the wire: `POST /api/git/clone` clones a repository into the workspace with the sandbox's
 * own `git` (a command like any other: the session's env and cwd, isolation, the time limit). Which
 * repository URLs are accepted is decided by the container (container/git/repo-url.ts); the schema
 * here checks only the shape of the request.
 */
import * as z from "zod";
import { LIMITS } from "./limits.ts";
import type { SuccessEnvelope } from "./process.ts";
import { commandSessionIdSchema } from "./sessions.ts";
import { withoutNul } from "./validation.ts";
import { lazySchema } from "./lazy-schema.ts";

export const GIT_ROUTES = {
  clone: "/api/git/clone",
} as const;

export const GIT_LIMITS = {
  /** Time a clone may take unless the caller says otherwise: big repositories take minutes. */
  defaultCloneTimeoutMs: 10 * 60 * 1000,
  maxRepoUrlLength: 4096,
  /** Bytes of git's stderr kept in a GIT_CLONE_FAILED error: the end, where git says what went wrong. */
  stderrTailBytes: 4096,
} as const;

/**
 * A branch or tag name as `git clone --branch` takes it. Never starting with `-` (git would read it
 * as an option), no `..`, whitespace or the characters git refuses in ref names.
 */
const branchSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(255)
  .regex(/^(?!-)(?!.*\.\.)[^\s~^:?*[\\\x00-\x1f\x7f]+$/, "branch is a ref name (no leading '-', no '..', spaces or ~^:?*[\\)"));

export const gitCloneRequestSchema = lazySchema(() => z.strictObject({
  repoUrl: withoutNul(z.string().min(1).max(GIT_LIMITS.maxRepoUrlLength), "repository URLs"),
  /** Branch or tag to check out (default: the repository's default branch). */
  branch: branchSchema.optional(),
  /** Where to clone (relative: in the workspace; absolute: anywhere in the sandbox). Default: the repository's name in the workspace. */
  targetDir: withoutNul(z.string().min(1).max(4096), "paths").optional(),
  /** Shallow clone of this many commits. */
  depth: z.number().int().positive().max(2 ** 31 - 1).optional(),
  /** Time limit of the clone in milliseconds (default GIT_LIMITS.defaultCloneTimeoutMs). */
  timeoutMs: z.number().int().positive().max(LIMITS.maxTimeoutMs).optional(),
  /** Clone as a command of this session (its env, e.g. credentials helpers). */
  sessionId: commandSessionIdSchema.optional(),
}));
export type GitCloneRequest = z.output<typeof gitCloneRequestSchema>;

export const gitCloneResultSchema = lazySchema(() => z.object({
  repoUrl: z.string(),
  /** The branch checked out (the one asked for, else the repository's default). */
  branch: z.string().describe("The branch checked out (the asked-for one, else the repository's default)"),
  /** The commit checked out. */
  commit: z.string().describe("The commit checked out"),
  /** Absolute path of the clone. */
  targetDir: z.string().describe("Absolute path of the clone"),
  /** How long the clone took, in milliseconds. */
  duration: z.number().describe("Milliseconds the clone took"),
}));
export type GitCloneResponse = SuccessEnvelope & z.infer<typeof gitCloneResultSchema>;
