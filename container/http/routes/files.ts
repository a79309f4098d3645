/**
 * Files under `/api/files/` (protocol/files.ts): JSON for the small operations, raw bytes both ways
 * on `/api/files/stream` so a large file only ever passes through in chunks.
 */
import { pipeline } from "node:stream/promises";
import {
  deleteFileRequestSchema,
  existsRequestSchema,
  FILE_ROUTES,
  FILE_STREAM_HEADERS,
  listFilesRequestSchema,
  mkdirRequestSchema,
  moveFileRequestSchema,
  readFileRequestSchema,
  renameFileRequestSchema,
  streamWriteQuerySchema,
  writeFileRequestSchema,
} from "../../../protocol/files.ts";
import { describeValidationError } from "../../../protocol/validation.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { decodeBase64 } from "../../engine/options.ts";
import { deleteEntry } from "../../files/delete.ts";
import { entryExists } from "../../files/exists.ts";
import { listDirectory } from "../../files/list.ts";
import { contentTypeOf } from "../../files/mime.ts";
import { makeDirectory } from "../../files/mkdir.ts";
import { openFileDownload, readFileContent } from "../../files/read.ts";
import { moveEntry, renameEntry } from "../../files/relocate.ts";
import { writeFileContent, writeFileFromStream } from "../../files/write.ts";
import { readJson } from "../request.ts";
import type { RequestContext, RouteGroup } from "../types.ts";

async function writeFile(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, writeFileRequestSchema);
  const { paths, fileLimits } = ctx.server.services;
  const data = request.encoding === "base64" ? decodeBase64(request.content, "content") : Buffer.from(request.content, "utf8");
  if (data.length > fileLimits.maxJsonFileBytes) {
    throw new ServiceError("PAYLOAD_TOO_LARGE", `content is larger than ${fileLimits.maxJsonFileBytes} bytes; use PUT ${FILE_ROUTES.stream}`, {
      maxBytes: fileLimits.maxJsonFileBytes,
    });
  }
  const result = await writeFileContent(paths, request.path, data, {
    ...(request.createParents === undefined ? {} : { createParents: request.createParents }),
    ...(request.mode === undefined ? {} : { mode: request.mode }),
  });
  sendOk(ctx.res, result);
}

async function uploadFile(ctx: RequestContext): Promise<void> {
  const query = parseQuery(ctx);
  const { paths, fileLimits } = ctx.server.services;
  const maxBytes = fileLimits.maxStreamedFileBytes;
  const declared = Number(ctx.req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new ServiceError("PAYLOAD_TOO_LARGE", `upload of ${declared} bytes exceeds ${maxBytes} bytes`, { maxBytes });
  }
  const result = await writeFileFromStream(paths, query.path, ctx.req, {
    maxBytes,
    ...(query.createParents === undefined ? {} : { createParents: query.createParents }),
    ...(query.mode === undefined ? {} : { mode: query.mode }),
  });
  sendOk(ctx.res, result);
}

async function downloadFile(ctx: RequestContext): Promise<void> {
  const filePath = ctx.url.searchParams.get("path");
  if (!filePath) throw new ServiceError("INVALID_REQUEST", "the path query parameter is required");
  const download = await openFileDownload(ctx.server.services.paths, filePath);
  ctx.res.writeHead(200, {
    "content-type": contentTypeOf(download.mimeType, download.isBinary),
    "content-length": download.size,
    [FILE_STREAM_HEADERS.size]: String(download.size),
    [FILE_STREAM_HEADERS.isBinary]: String(download.isBinary),
    [FILE_STREAM_HEADERS.path]: encodeURIComponent(download.path),
    "cache-control": "no-store",
  });
  if (ctx.req.method === "HEAD") {
    download.stream.destroy();
    ctx.res.end();
    return;
  }
  // A reader that goes away ends the pipeline, which closes the file.
  await pipeline(download.stream, ctx.res).catch(() => ctx.res.destroy());
}

async function readFile(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, readFileRequestSchema);
  const { paths, fileLimits } = ctx.server.services;
  const result = await readFileContent(paths, request.path, {
    maxBytes: fileLimits.maxJsonFileBytes,
    ...(request.encoding === undefined ? {} : { encoding: request.encoding }),
  });
  sendOk(ctx.res, result);
}

async function mkdir(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, mkdirRequestSchema);
  sendOk(ctx.res, await makeDirectory(ctx.server.services.paths, request.path, request));
}

async function deleteFile(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, deleteFileRequestSchema);
  sendOk(ctx.res, await deleteEntry(ctx.server.services.paths, request.path, request));
}

async function renameFile(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, renameFileRequestSchema);
  sendOk(ctx.res, await renameEntry(ctx.server.services.paths, request.oldPath, request.newPath, request));
}

async function moveFile(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, moveFileRequestSchema);
  sendOk(ctx.res, await moveEntry(ctx.server.services.paths, request.sourcePath, request.destinationPath, request));
}

async function listFiles(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, listFilesRequestSchema);
  const listing = await listDirectory(ctx.server.services.paths, request.path ?? ".", request);
  sendOk(ctx.res, { ...listing, count: listing.files.length });
}

async function exists(ctx: RequestContext): Promise<void> {
  const request = await readJson(ctx, existsRequestSchema);
  sendOk(ctx.res, await entryExists(ctx.server.services.paths, request.path));
}

function parseQuery(ctx: RequestContext) {
  const parsed = streamWriteQuerySchema.safeParse(Object.fromEntries(ctx.url.searchParams));
  if (!parsed.success) {
    const { message, issues } = describeValidationError(parsed.error, "query");
    throw new ServiceError("INVALID_REQUEST", message, { issues });
  }
  return parsed.data;
}

export const fileRoutes: RouteGroup = {
  name: "files",
  routes: [
    { method: "POST", path: FILE_ROUTES.write, handler: writeFile },
    { method: "POST", path: FILE_ROUTES.read, handler: readFile },
    { method: "GET", path: FILE_ROUTES.stream, handler: downloadFile },
    { method: "PUT", path: FILE_ROUTES.stream, handler: uploadFile },
    { method: "POST", path: FILE_ROUTES.stream, handler: uploadFile },
    { method: "POST", path: FILE_ROUTES.mkdir, handler: mkdir },
    { method: "POST", path: FILE_ROUTES.delete, handler: deleteFile },
    { method: "POST", path: FILE_ROUTES.rename, handler: renameFile },
    { method: "POST", path: FILE_ROUTES.move, handler: moveFile },
    { method: "POST", path: FILE_ROUTES.list, handler: listFiles },
    { method: "POST", path: FILE_ROUTES.exists, handler: exists },
  ],
};
