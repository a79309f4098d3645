/**
 * Workspace archives (protocol/archive.ts): `POST /api/archive/create` streams a gzip'd tar of the
 * asked paths out as it is made; `PUT /api/archive/extract` extracts one as it streams in. What
 * backups, durable workspaces and snapshots are made of; of another folder of the sandbox with `dir`,
 * less `exclude` (paths), `excludes` (wildcard patterns) and, with `gitignore`, what git ignores there.
 */
import { pipeline } from "node:stream/promises";
import {
  ARCHIVE_MEDIA_TYPE,
  ARCHIVE_ROUTES,
  TAR_MEDIA_TYPE,
  createArchiveRequestSchema,
  extractArchiveQuerySchema,
} from "../../../protocol/archive.ts";
import { describeValidationError } from "../../../protocol/validation.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { bodyChunks } from "../../../server-kit/http/body-chunks.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { leaveOutTest } from "../../archive/leave-out.ts";
import { packArchive } from "../../archive/pack.ts";
import { archivePaths, existingPaths } from "../../archive/paths.ts";
import { unpackArchive } from "../../archive/unpack.ts";
import { locate, openEntryDirectory } from "../../files/locate.ts";
import { makeDirectory } from "../../files/mkdir.ts";
import type { Access } from "../../files/paths.ts";
import { readJson } from "../request.ts";
import type { RequestContext, RouteGroup } from "../types.ts";

async function createArchive(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, createArchiveRequestSchema);
  const folder = await archiveFolder(ctx, request.dir, "read");
  try {
    const paths = await existingPaths(folder.path, await archivePaths(folder.path, request.paths));
    const gzip = request.format !== "tar";
    ctx.res.writeHead(200, { "content-type": gzip ? ARCHIVE_MEDIA_TYPE : TAR_MEDIA_TYPE, "cache-control": "no-store" });
    // A reader that goes away, or a file that cannot be read, ends the response short: the reader
    // sees a cut archive (a cut connection), never a whole-looking one.
    const exclude = request.exclude ?? [];
    const leaveOut = await leaveOutTest(folder.path, { excludes: request.excludes ?? [], gitignore: request.gitignore ?? false });
    await pipeline(packArchive(folder.path, paths, { gzip, exclude, leaveOut }), ctx.res).catch(() => ctx.res.destroy());
  } finally {
    await folder.close();
  }
}

/**
 * The folder an archive is of: the workspace, or `dir` found by the file routes' walk (anywhere in
 * the sandbox but its server). An extraction works in it by its descriptor, held open, so a command
 * that swaps it for a link meanwhile cannot move the extraction elsewhere. A pack reads it by the
 * walked path (node-tar names the folder's own entry by lstat-ing it, which a descriptor's path would
 * answer as a link): a swap then yields at most names and empty files (security.md).
 */
async function archiveFolder(ctx: RequestContext, dir: string | undefined, access: Access): Promise<{ path: string; close(): Promise<void> }> {
  const { workspace, services } = ctx.server;
  if (dir === undefined) return { path: workspace, close: async () => {} };
  if (access === "write") await makeDirectory(services.paths, dir, { recursive: true });
  const entry = await locate(services.paths, dir, access);
  const handle = await openEntryDirectory(entry).finally(() => entry.dir.close());
  if (access === "read") {
    await handle.close();
    return { path: handle.real, close: async () => {} };
  }
  return { path: handle.self, close: () => handle.close() };
}

async function extractArchive(ctx: RequestContext): Promise<void> {
  const search = ctx.url.searchParams;
  const raw = {
    ...(search.has("clear") ? { clear: search.get("clear") } : {}),
    ...(search.getAll("path").length > 0 ? { paths: search.getAll("path") } : {}),
    ...(search.has("dir") ? { dir: search.get("dir") } : {}),
  };
  const parsed = extractArchiveQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const { message, issues } = describeValidationError(parsed.error, "query");
    throw new ServiceError("INVALID_REQUEST", message, { issues });
  }
  const { limits } = ctx.server;
  const maxBytes = ctx.server.services.fileLimits.maxStreamedFileBytes;
  const declared = Number(ctx.req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new ServiceError("PAYLOAD_TOO_LARGE", `an archive of ${declared} bytes exceeds ${maxBytes} bytes`, { maxBytes });
  }
  const folder = await archiveFolder(ctx, parsed.data.dir, "write");
  try {
    const clear = parsed.data.clear ? await archivePaths(folder.path, parsed.data.paths) : [];
    const extractLimits = { maxBytes: limits.maxExtractedBytes, maxEntries: limits.maxExtractedEntries };
    const deadlines = { totalMs: limits.extractDeadlineMs, stallMs: limits.extractStallMs };
    sendOk(ctx.res, await unpackArchive(folder.path, bodyChunks(ctx.req), { clear, limits: extractLimits, deadlines }));
  } finally {
    await folder.close();
  }
}

export const archiveRoutes: RouteGroup = {
  name: "archive",
  routes: [
    { method: "POST", path: ARCHIVE_ROUTES.create, handler: createArchive },
    { method: "PUT", path: ARCHIVE_ROUTES.extract, handler: extractArchive },
  ],
};
