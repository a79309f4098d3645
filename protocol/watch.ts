/**
 * Watching files on the wire. `POST /api/files/watch` answers with Server-Sent Events: `watching`
 * once the watch is in place, then a `change` per created, modified or deleted entry (paths relative
 * to the watched directory), `overflow` when a slow reader made the server drop changes (the reader
 * should look again, e.g. with the changes route), and `stopped` or `error` as the last event.
 * `POST /api/files/changes` answers whether anything under a path changed since a version it gave
 * earlier: the version is a digest of what is there (names, types, sizes, modification times), so it
 * needs no watch kept open and holds across container restarts.
 *
 * Globs (`include`, `exclude`) know `*` (within a name), `**` (across directories) and `?`; a glob
 * matches a path when it matches one or more whole components of it, wherever they stand, so
 * `node_modules` excludes every node_modules directory and what is in it, and `*.ts` includes every
 * TypeScript file.
 */
import * as z from "zod";
import { FILE_LIMITS } from "./files.ts";
import type { SuccessEnvelope } from "./process.ts";
import { lazySchema } from "./lazy-schema.ts";

export const WATCH_ROUTES = {
  watch: "/api/files/watch",
  changes: "/api/files/changes",
} as const;

export const WATCH_LIMITS = {
  /** What is left out when the caller names neither `include` nor `exclude`. */
  defaultExclude: [".git", "node_modules"],
  /** Directories one watch follows (each holds one inotify watch); a bigger tree is refused with WATCH_LIMIT_EXCEEDED. */
  maxWatchedDirectories: 8192,
  /** Changes held for a reader that does not keep up; past it they are dropped and counted in an `overflow` event. */
  maxPendingChanges: 1024,
  /** Entries a `changes` digest reads; a bigger tree is refused with WATCH_LIMIT_EXCEEDED. */
  maxDigestEntries: 200_000,
  maxGlobs: 64,
} as const;

export const WATCH_CHANGE_KINDS = ["create", "modify", "delete"] as const;
export type WatchChangeKind = (typeof WATCH_CHANGE_KINDS)[number];

const globSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[^\0[\]{}]+$/, "globs use *, ** and ? (no [], {} or NUL)"));

const pathSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(FILE_LIMITS.maxPathLength)
  .refine((p) => !p.includes("\0"), "paths cannot contain NUL"));

/** What to watch (or digest): a directory, with its subdirectories unless `recursive: false`. */
export const watchRequestSchema = lazySchema(() => z.strictObject({
  path: pathSchema,
  /** Follow subdirectories (default true). */
  recursive: z.boolean().optional(),
  /** Only entries matching one of these globs. */
  include: z.array(globSchema).max(WATCH_LIMITS.maxGlobs).optional(),
  /** Leave out entries matching one of these globs (default WATCH_LIMITS.defaultExclude when neither is given). */
  exclude: z.array(globSchema).max(WATCH_LIMITS.maxGlobs).optional(),
}));
export type WatchRequest = z.output<typeof watchRequestSchema>;

/** A version string as the changes route gives it out. */
export const WATCH_VERSION_PATTERN = /^v1:[A-Za-z0-9_-]{22}$/;

export const changesRequestSchema = lazySchema(() => watchRequestSchema.extend({
  /** A version an earlier call returned; without it, only the current version is returned. */
  since: z.string().min(1).max(256).optional(),
}));
export type ChangesRequest = z.output<typeof changesRequestSchema>;

export const changesResultSchema = lazySchema(() => z.object({
  /** Absolute path of what was looked at. */
  path: z.string(),
  /** The current version: pass it as `since` next time. */
  version: z.string().describe("Pass as `since` next time"),
  /** True when `since` was given and differs from the current version. */
  changed: z.boolean().describe("`since` was given and differs from the current version"),
  /** Entries the digest covered. */
  entries: z.number().int().describe("Entries the version covers"),
}));
export type ChangesResponse = SuccessEnvelope & z.infer<typeof changesResultSchema>;

export type WatchEvent =
  | { type: "watching"; path: string; recursive: boolean }
  | { type: "change"; kind: WatchChangeKind; path: string; isDirectory: boolean; timestamp: string }
  | { type: "overflow"; dropped: number }
  | { type: "stopped"; reason: string }
  | { type: "error"; code: string; error: string };
