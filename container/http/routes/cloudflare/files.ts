/**
 * Files at the paths and in the shapes of Cloudflare's container API: `POST /api/write`, `/api/read`,
 * `/api/mkdir`, `/api/delete`, `/api/rename`, `/api/move`, `/api/list-files`, `/api/exists`. Each is
 * our file operation (routes/files.ts); only the request and the reply are reshaped here. Renames and
 * moves replace an existing target, as their `mv` does.
 */
import {
  deleteFileRequestSchema,
  existsRequestSchema,
  listFilesRequestSchema,
  mkdirRequestSchema,
  moveFileRequestSchema,
  readFileRequestSchema,
  renameFileRequestSchema,
  writeFileRequestSchema,
  type FileInfo,
} from "../../../../protocol/files.ts";
import { sendOk } from "../../../../server-kit/http/response.ts";
import { sendFileContent } from "../../file-content.ts";
import { fileOperations } from "../files.ts";
import type { RequestContext, Route } from "../../types.ts";
import { cloudflareRoute } from "./errors.ts";
import { readTheirJson } from "./requests.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";

/** Their FileInfo: the mode as `rwxr-xr-x` and the owner's permissions as flags. */
function theirFileInfo(file: FileInfo) {
  const mode = Number.parseInt(file.mode, 8);
  const triple = (bits: number) => `${bits & 4 ? "r" : "-"}${bits & 2 ? "w" : "-"}${bits & 1 ? "x" : "-"}`;
  const owner = (mode >> 6) & 7;
  return {
    ...file,
    mode: triple(owner) + triple((mode >> 3) & 7) + triple(mode & 7),
    permissions: { readable: (owner & 4) !== 0, writable: (owner & 2) !== 0, executable: (owner & 1) !== 0 },
  };
}

/** Replace, as `mv` does, unless the caller said otherwise. */
const replacing = (body: Record<string, unknown>) => ({ overwrite: true, ...body });

async function write(ctx: RequestContext): Promise<void> {
  const result = await fileOperations.write(ctx.server, await readTheirJson(ctx, writeFileRequestSchema));
  sendOk(ctx.res, { path: result.path, bytesWritten: result.bytesWritten });
}

async function read(ctx: RequestContext): Promise<void> {
  sendFileContent(ctx.res, await fileOperations.read(ctx.server, await readTheirJson(ctx, readFileRequestSchema)), { utf8Name: "utf-8" });
}

async function mkdir(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, mkdirRequestSchema);
  const result = await fileOperations.mkdir(ctx.server, request);
  sendOk(ctx.res, { path: result.path, recursive: request.recursive ?? false });
}

async function remove(ctx: RequestContext): Promise<void> {
  sendOk(ctx.res, await fileOperations.delete(ctx.server, await readTheirJson(ctx, deleteFileRequestSchema)));
}

async function rename(ctx: RequestContext): Promise<void> {
  const result = await fileOperations.rename(ctx.server, await readTheirJson(ctx, renameFileRequestSchema, replacing));
  sendOk(ctx.res, { path: result.oldPath, newPath: result.newPath });
}

async function move(ctx: RequestContext): Promise<void> {
  const result = await fileOperations.move(ctx.server, await readTheirJson(ctx, moveFileRequestSchema, replacing));
  sendOk(ctx.res, { path: result.sourcePath, newPath: result.destinationPath });
}

/** Their listing options come nested: `{path, options: {recursive, includeHidden}}`. */
async function list(ctx: RequestContext): Promise<void> {
  const request = await readTheirJson(ctx, listFilesRequestSchema, ({ options, ...body }) => ({ ...body, ...(options as object | undefined) }));
  const listing = await fileOperations.list(ctx.server, request);
  sendOk(ctx.res, { path: listing.path, files: listing.files.map(theirFileInfo), count: listing.count, truncated: listing.truncated });
}

async function exists(ctx: RequestContext): Promise<void> {
  sendOk(ctx.res, await fileOperations.exists(ctx.server, await readTheirJson(ctx, existsRequestSchema)));
}

export const cloudflareFileRoutes: Route[] = [
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.write, write),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.read, read),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.mkdir, mkdir),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.delete, remove),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.rename, rename),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.move, move),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.listFiles, list),
  cloudflareRoute("POST", CLOUDFLARE_ROUTES.exists, exists),
];
