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
  type DeleteFileRequest,
  type ExistsRequest,
  type ListFilesRequest,
  type MkdirRequest,
  type MoveFileRequest,
  type ReadFileRequest,
  type RenameFileRequest,
  type WriteFileRequest,
} from "../../../protocol/files.ts";
import type { z } from "zod";
import { describeValidationError } from "../../../protocol/validation.ts";
import { sendOk } from "../../../server-kit/http/response.ts";
import { bodyChunks } from "../../../server-kit/http/body-chunks.ts";
import { ServiceError } from "../../../server-kit/service-error.ts";
import { decodeBase64 } from "../../engine/options.ts";
import { deleteEntry } from "../../files/delete.ts";
import { entryExists } from "../../files/exists.ts";
import { listDirectory } from "../../files/list.ts";
import { contentTypeOf } from "../../files/mime.ts";
import { makeDirectory } from "../../files/mkdir.ts";
import { openFileDownload, readFileBytes } from "../../files/read.ts";
import { moveEntry, renameEntry } from "../../files/relocate.ts";
import { writeFileContent, writeFileFromStream } from "../../files/write.ts";
import { sendFileContent } from "../file-content.ts";
import { readJson, readJsonWithBytes } from "../request.ts";
import type { RequestContext, RouteGroup, ServerContext } from "../types.ts";

/**
 * The JSON file operations, from a validated request to the result the route sends: one place that
 * decides each, for our routes below and for routes that speak another API's shapes (routes/cloudflare/).
 */
export const fileOperations = {
  /** `content`: the UTF-8 bytes of `request.content` where the body gave them as such (request.ts). */
  async write(server: ServerContext, request: WriteFileRequest, content?: Buffer) {
    const { paths, fileLimits } = server.services;
    const data =
      request.encoding === "base64"
        ? decodeBase64(content ? content.toString("utf8") : request.content, "content")
        : (content ?? Buffer.from(request.content, "utf8"));
    if (data.length > fileLimits.maxJsonFileBytes) {
      throw new ServiceError("PAYLOAD_TOO_LARGE", `content is larger than ${fileLimits.maxJsonFileBytes} bytes; use PUT ${FILE_ROUTES.stream}`, {
        maxBytes: fileLimits.maxJsonFileBytes,
      });
    }
    return writeFileContent(paths, request.path, data, {
      ...(request.createParents === undefined ? {} : { createParents: request.createParents }),
      ...(request.mode === undefined ? {} : { mode: request.mode }),
    });
  },
  read(server: ServerContext, request: ReadFileRequest) {
    const { paths, fileLimits } = server.services;
    return readFileBytes(paths, request.path, {
      maxBytes: fileLimits.maxJsonFileBytes,
      ...(request.encoding === undefined ? {} : { encoding: request.encoding }),
    });
  },
  mkdir: (server: ServerContext, request: MkdirRequest) => makeDirectory(server.services.paths, request.path, request),
  delete: (server: ServerContext, request: DeleteFileRequest) => deleteEntry(server.services.paths, request.path, request),
  rename: (server: ServerContext, request: RenameFileRequest) => renameEntry(server.services.paths, request.oldPath, request.newPath, request),
  move: (server: ServerContext, request: MoveFileRequest) => moveEntry(server.services.paths, request.sourcePath, request.destinationPath, request),
  async list(server: ServerContext, request: ListFilesRequest) {
    const listing = await listDirectory(server.services.paths, request.path ?? ".", request);
    return { ...listing, count: listing.files.length };
  },
  exists: (server: ServerContext, request: ExistsRequest) => entryExists(server.services.paths, request.path),
};

/** A JSON write: the content is taken from the body as bytes where it can be (request.ts). */
async function writeFile(ctx: RequestContext): Promise<void> {
  const { value, bytes } = await readJsonWithBytes(ctx, writeFileRequestSchema, "content");
  sendOk(ctx.res, await fileOperations.write(ctx.server, value, bytes));
}

/** A JSON read: the answer is written from the file's bytes (file-content.ts). */
async function readFile(ctx: RequestContext): Promise<void> {
  sendFileContent(ctx.res, await fileOperations.read(ctx.server, await readJson(ctx, readFileRequestSchema)));
}

/** A route that reads a JSON request with `schema`, runs `operation` and sends its result. */
function jsonRoute<S extends z.ZodType>(schema: S, operation: (server: ServerContext, request: z.output<S>) => Promise<object>) {
  return async (ctx: RequestContext): Promise<void> => sendOk(ctx.res, await operation(ctx.server, await readJson(ctx, schema)));
}

async function uploadFile(ctx: RequestContext): Promise<void> {
  const query = parseQuery(ctx);
  const { paths, fileLimits } = ctx.server.services;
  const maxBytes = fileLimits.maxStreamedFileBytes;
  const declared = Number(ctx.req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new ServiceError("PAYLOAD_TOO_LARGE", `upload of ${declared} bytes exceeds ${maxBytes} bytes`, { maxBytes });
  }
  const result = await writeFileFromStream(paths, query.path, bodyChunks(ctx.req), {
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
    { method: "POST", path: FILE_ROUTES.mkdir, handler: jsonRoute(mkdirRequestSchema, fileOperations.mkdir) },
    { method: "POST", path: FILE_ROUTES.delete, handler: jsonRoute(deleteFileRequestSchema, fileOperations.delete) },
    { method: "POST", path: FILE_ROUTES.rename, handler: jsonRoute(renameFileRequestSchema, fileOperations.rename) },
    { method: "POST", path: FILE_ROUTES.move, handler: jsonRoute(moveFileRequestSchema, fileOperations.move) },
    { method: "POST", path: FILE_ROUTES.list, handler: jsonRoute(listFilesRequestSchema, fileOperations.list) },
    { method: "POST", path: FILE_ROUTES.exists, handler: jsonRoute(existsRequestSchema, fileOperations.exists) },
  ],
};
