/**
 * Files on the wire. Every route lives under `/api/files/`: JSON bodies for the small operations,
 * raw bytes for the streamed pair (`GET|PUT /api/files/stream?path=…`), so a large file never sits
 * whole in memory on either side.
 *
 * Paths are relative to the sandbox's workspace, or absolute anywhere in the sandbox (`/workspace`
 * naming the workspace): the kernel refuses what the sandbox may not touch (`PERMISSION_DENIED`), and
 * the server refuses its own process (`/proc/self`, …: `PERMISSION_DENIED`). A server that wraps each
 * command in bwrap keeps to the workspace and the configured paths (`PATH_OUTSIDE_WORKSPACE`).
 */
import * as z from "zod";
import type { SuccessEnvelope } from "./process.ts";
import { lazySchema } from "./lazy-schema.ts";

export const FILE_LIMITS = {
  /** Largest file a JSON write (`content` decoded) or a JSON read returns; larger ones use the stream routes. */
  maxJsonFileBytes: 16 * 1024 * 1024,
  /** Default cap on one streamed upload (the server may be configured higher or lower). */
  maxStreamedFileBytes: 4 * 1024 * 1024 * 1024,
  /** Entries returned by one listing before it is cut off with `truncated: true`. */
  maxListEntries: 10_000,
  maxPathLength: 4096,
  /** Bytes inspected to decide whether a file is binary. */
  binarySniffBytes: 8192,
} as const;

export const FILE_ROUTES = {
  write: "/api/files/write",
  read: "/api/files/read",
  /** GET: raw download; PUT or POST: raw upload. Both take `?path=`. */
  stream: "/api/files/stream",
  mkdir: "/api/files/mkdir",
  delete: "/api/files/delete",
  rename: "/api/files/rename",
  move: "/api/files/move",
  list: "/api/files/list",
  exists: "/api/files/exists",
} as const;

export type FileEncoding = "utf8" | "base64";
export type FileType = "file" | "directory" | "symlink" | "other";

const pathSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(FILE_LIMITS.maxPathLength)
  .refine((p) => !p.includes("\0"), "paths cannot contain NUL"));
const encodingSchema = lazySchema(() => z.enum(["utf8", "utf-8", "base64"]).transform((e): FileEncoding => (e === "base64" ? "base64" : "utf8")));
/**
 * Permission bits, as a number (0o644) or an octal string ("644", "0755"). Never setuid, setgid or
 * sticky: a file the API makes must not run with its owner's rights for whoever runs it.
 */
const modeStringSchema = lazySchema(() => z
  .string()
  .regex(/^0?[0-7]{3}$/, "mode is permission bits, at most 777 (no setuid, setgid or sticky bit)")
  .transform((s) => Number.parseInt(s, 8)));
const modeSchema = lazySchema(() => z.union([
  z.number().int().min(0).max(0o777, "mode is permission bits, at most 0o777 (no setuid, setgid or sticky bit)"),
  modeStringSchema,
]));

// ── requests ────────────────────────────────────────────────────────────────

export const writeFileRequestSchema = lazySchema(() => z.strictObject({
  path: pathSchema,
  content: z.string(),
  /** How `content` is encoded (default utf8). */
  encoding: encodingSchema.optional(),
  /** Create missing parent directories (default true). */
  createParents: z.boolean().optional(),
  mode: modeSchema.optional(),
}));
export type WriteFileRequest = z.output<typeof writeFileRequestSchema>;

/** Query of a streamed upload: `PUT /api/files/stream?path=…&createParents=false&mode=755`. */
export const streamWriteQuerySchema = lazySchema(() => z.object({
  path: pathSchema,
  createParents: z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1").optional(),
  mode: modeStringSchema.optional(),
}));
export type StreamWriteQuery = z.output<typeof streamWriteQuerySchema>;

export const readFileRequestSchema = lazySchema(() => z.strictObject({
  path: pathSchema,
  /** Without it: utf8 for text, base64 for binary files. */
  encoding: encodingSchema.optional(),
}));
export type ReadFileRequest = z.output<typeof readFileRequestSchema>;

export const mkdirRequestSchema = lazySchema(() => z.strictObject({
  path: pathSchema,
  /** Create parents and accept an existing directory (default false). */
  recursive: z.boolean().optional(),
  mode: modeSchema.optional(),
}));
export type MkdirRequest = z.output<typeof mkdirRequestSchema>;

export const deleteFileRequestSchema = lazySchema(() => z.strictObject({
  path: pathSchema,
  /** Needed to delete a directory (with everything in it). */
  recursive: z.boolean().optional(),
}));
export type DeleteFileRequest = z.output<typeof deleteFileRequestSchema>;

/** Renames an entry to exactly `newPath`; an existing target is an error unless `overwrite`. */
export const renameFileRequestSchema = lazySchema(() => z.strictObject({
  oldPath: pathSchema,
  newPath: pathSchema,
  overwrite: z.boolean().optional(),
}));
export type RenameFileRequest = z.output<typeof renameFileRequestSchema>;

/** `mv` semantics: into `destinationPath` when it is an existing directory, else to it; works across filesystems. */
export const moveFileRequestSchema = lazySchema(() => z.strictObject({
  sourcePath: pathSchema,
  destinationPath: pathSchema,
  overwrite: z.boolean().optional(),
}));
export type MoveFileRequest = z.output<typeof moveFileRequestSchema>;

export const listFilesRequestSchema = lazySchema(() => z.strictObject({
  /** Directory to list (default: the workspace). */
  path: pathSchema.optional(),
  recursive: z.boolean().optional(),
  /** Include names starting with "." (default false). */
  includeHidden: z.boolean().optional(),
  maxEntries: z.number().int().positive().max(FILE_LIMITS.maxListEntries).optional(),
}));
export type ListFilesRequest = z.output<typeof listFilesRequestSchema>;

export const existsRequestSchema = lazySchema(() => z.strictObject({ path: pathSchema }));
export type ExistsRequest = z.output<typeof existsRequestSchema>;

// ── responses ───────────────────────────────────────────────────────────────

const fileTypeSchema = lazySchema(() => z.enum(["file", "directory", "symlink", "other"]));

export const fileInfoSchema = lazySchema(() => z.object({
  name: z.string(),
  /** Relative to the listed directory, "/"-separated. */
  relativePath: z.string(),
  absolutePath: z.string(),
  type: fileTypeSchema,
  /** Bytes (of the link itself for symlinks). */
  size: z.number().int(),
  /** Permission bits as an octal string, e.g. "0644". */
  mode: z.string().describe('Octal, e.g. "0644"'),
  /** ISO time of the last modification. */
  modifiedAt: z.string(),
  /** Where a symlink points (as written in the link). */
  target: z.string().optional(),
}));
export type FileInfo = z.infer<typeof fileInfoSchema>;

export const fileWrittenSchema = lazySchema(() => z.object({ path: z.string(), bytesWritten: z.number().int() }));
/** A whole file as `POST /api/files/read` returns it. */
export const fileContentSchema = lazySchema(() => z.object({
  path: z.string(),
  content: z.string(),
  encoding: z.enum(["utf8", "base64"]),
  size: z.number().int(),
  mimeType: z.string(),
  isBinary: z.boolean(),
}));
export type FileContent = z.infer<typeof fileContentSchema>;
export const mkdirResultSchema = lazySchema(() => z.object({ path: z.string(), created: z.boolean() }));
export const deleteResultSchema = lazySchema(() => z.object({ path: z.string() }));
export const renameResultSchema = lazySchema(() => z.object({ oldPath: z.string(), newPath: z.string() }));
export const moveResultSchema = lazySchema(() => z.object({ sourcePath: z.string(), destinationPath: z.string() }));
export const fileListingSchema = lazySchema(() => z.object({
  path: z.string(),
  files: z.array(fileInfoSchema),
  count: z.number().int(),
  /** True when `maxEntries` cut the listing short. */
  truncated: z.boolean(),
}));
export const existsResultSchema = lazySchema(() => z.object({ path: z.string(), exists: z.boolean(), type: fileTypeSchema.optional() }));

export type WriteFileResponse = SuccessEnvelope & z.infer<typeof fileWrittenSchema>;
export type ReadFileResponse = SuccessEnvelope & FileContent;
export type MkdirResponse = SuccessEnvelope & z.infer<typeof mkdirResultSchema>;
export type DeleteFileResponse = SuccessEnvelope & z.infer<typeof deleteResultSchema>;
export type RenameFileResponse = SuccessEnvelope & z.infer<typeof renameResultSchema>;
export type MoveFileResponse = SuccessEnvelope & z.infer<typeof moveResultSchema>;
export type ListFilesResponse = SuccessEnvelope & z.infer<typeof fileListingSchema>;
export type ExistsResponse = SuccessEnvelope & z.infer<typeof existsResultSchema>;

/** Headers of `GET /api/files/stream` besides content-type and content-length. */
export const FILE_STREAM_HEADERS = {
  size: "x-file-size",
  isBinary: "x-file-binary",
  path: "x-file-path",
} as const;
