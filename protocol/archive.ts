/**
 * Workspace archives on the wire: what durable workspaces and snapshots are made of. The container
 * server streams a gzip-compressed (or plain) tar of given paths out (`POST /api/archive/create`) and extracts
 * one streamed in (`PUT /api/archive/extract`); neither side holds an archive whole in memory.
 *
 * An archive is of one folder (`dir`: default the workspace; relative to it, or absolute anywhere in
 * the sandbox, as file paths are). Paths are relative to that folder and stay inside it: an archive
 * names entries relative to it, and extraction refuses absolute paths, `..` and writing through a
 * symbolic link.
 */
import * as z from "zod";
import type { SuccessEnvelope } from "./process.ts";
import { lazySchema } from "./lazy-schema.ts";

export const ARCHIVE_ROUTES = {
  /** POST `{ paths? }` → `application/gzip` bytes. */
  create: "/api/archive/create",
  /** PUT gzip bytes, `?clear=true&path=…` → the extraction's counts. */
  extract: "/api/archive/extract",
} as const;

export const ARCHIVE_MEDIA_TYPE = "application/gzip";
/** An archive asked for uncompressed (`format: "tar"`), as Cloudflare's Bridge API hands workspaces out. */
export const TAR_MEDIA_TYPE = "application/x-tar";

export const ARCHIVE_FORMATS = ["tar.gz", "tar"] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

export const ARCHIVE_LIMITS = {
  /** Paths one archive may name; more is a mistake, not a workspace. */
  maxPaths: 64,
  maxPathLength: 4096,
  /**
   * What one extraction may write, as the archive's headers declare it: a gzip'd archive of a few
   * MB can unfold to terabytes. Past either limit the extraction stops with PAYLOAD_TOO_LARGE and
   * the workspace is left as it was.
   */
  maxExtractedBytes: 64 * 1024 ** 3,
  maxExtractedEntries: 2_000_000,
  /**
   * What may follow an archive's end marker: writers pad to a record (10 KiB by default, a few MiB
   * with a large blocking factor). More is refused (INVALID_ARCHIVE) rather than read: two MB of
   * gzip'd zeros are an empty archive followed by 2 GiB of nothing.
   */
  maxTrailingBytes: 8 * 1024 * 1024,
  /**
   * How long one extraction may take in all (EXTRACTION_TIMEOUT past it, the workspace left as it
   * was): long enough for the largest upload over a slow link, short enough that a body dripped in a
   * byte at a time does not hold a restore open for ever.
   */
  extractDeadlineMs: 60 * 60 * 1000,
  /**
   * How long the extraction may take over one received chunk (it unfolds to at most about 64 MiB):
   * longer is a stuck extraction, ended rather than left spinning (EXTRACTION_TIMEOUT).
   */
  extractStallMs: 60 * 1000,
  /** Heap the extraction may use (MiB); past it the extraction ends with PAYLOAD_TOO_LARGE. */
  extractHeapMiB: 256,
} as const;

/**
 * The most a decompressed archive within the extraction limits can be: its files' declared bytes, a
 * header and a block of padding per entry, a long name or pax header for each, and the end's padding.
 */
export function maxDecompressedBytes(limits: { maxExtractedBytes: number; maxExtractedEntries: number }): number {
  return limits.maxExtractedBytes + limits.maxExtractedEntries * 4 * 512 + ARCHIVE_LIMITS.maxTrailingBytes + 1024;
}

/**
 * A path an archive may cover: relative to the workspace, without `..` or NUL. "." (or none given)
 * is the whole workspace.
 */
export const archivePathSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(ARCHIVE_LIMITS.maxPathLength)
  .refine((p) => !p.includes("\0"), "paths cannot contain NUL")
  .refine((p) => !p.startsWith("/"), "archive paths are relative to the workspace")
  .refine((p) => !p.split("/").includes(".."), "archive paths cannot contain .."));

export const archivePathsSchema = lazySchema(() => z.array(archivePathSchema).min(1).max(ARCHIVE_LIMITS.maxPaths));

/** The folder an archive is of, or is extracted into: a file path (relative to the workspace, or absolute). */
export const archiveDirSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(ARCHIVE_LIMITS.maxPathLength)
  .refine((p) => !p.includes("\0"), "paths cannot contain NUL"));

/**
 * Wildcard patterns of entries left out (`node_modules`, `*.log`, `.cache/tmp`): `*` and `?` match
 * within one path component, `[…]` a class; a pattern without `/` names an entry at any depth, one
 * with `/` a path in the folder.
 */
export const archiveExcludePatternsSchema = lazySchema(() => z
  .array(
    z
      .string()
      .min(1)
      .max(ARCHIVE_LIMITS.maxPathLength)
      .refine((p) => !p.includes("\0"), "patterns cannot contain NUL"),
  )
  .max(1024));

export const createArchiveRequestSchema = lazySchema(() => z.strictObject({
  /** The folder archived (default: the workspace); `paths` and `exclude` are relative to it. */
  dir: archiveDirSchema.optional(),
  /** What to archive (default: the whole folder). */
  paths: archivePathsSchema.optional(),
  /** Workspace paths left out, with everything below them. */
  exclude: archivePathsSchema.optional(),
  /** Entries matching these wildcard patterns left out, with everything below them. */
  excludes: archiveExcludePatternsSchema.optional(),
  /** Leave out what git ignores in the folder (nothing, outside a repository). */
  gitignore: z.boolean().optional(),
  /** "tar.gz" (default) or "tar". Extraction takes either. */
  format: z.enum(ARCHIVE_FORMATS).optional(),
}));
export type CreateArchiveRequest = z.output<typeof createArchiveRequestSchema>;

/**
 * Query of `PUT /api/archive/extract`: `clear=true` empties the given paths (repeat `path=`; none:
 * the whole workspace) before extracting, so what is there afterwards is exactly what was saved.
 */
export const extractArchiveQuerySchema = lazySchema(() => z.object({
  /** The folder extracted into (default: the workspace; made when missing). */
  dir: archiveDirSchema.optional(),
  clear: z.enum(["true", "false"]).transform((v) => v === "true").optional(),
  paths: archivePathsSchema.optional(),
}));
export type ExtractArchiveQuery = z.output<typeof extractArchiveQuerySchema>;

/** importArchive()'s options, as the /v1 route takes them from its query. */
export const importArchiveOptionsSchema = lazySchema(() => z.strictObject({ dir: archiveDirSchema.optional() }));

export const importArchiveResultSchema = lazySchema(() => z.object({
  entries: z.number().int().describe("Entries written (files, folders, links)"),
  bytes: z.number().int().describe("Archive bytes read"),
}));
export type ImportArchiveResult = z.infer<typeof importArchiveResultSchema>;
export type ExtractArchiveResponse = SuccessEnvelope & ImportArchiveResult;
