/**
 * The Durable Object's file operations: RPC arguments validated with the protocol schemas, then
 * forwarded to the container's /api/files routes. The streamed pair passes bytes through as they
 * come, in both directions, so a large file is never held whole in the Durable Object.
 */
import {
  deleteFileRequestSchema,
  existsRequestSchema,
  FILE_ROUTES,
  listFilesRequestSchema,
  mkdirRequestSchema,
  moveFileRequestSchema,
  readFileRequestSchema,
  renameFileRequestSchema,
  streamWriteQuerySchema,
  writeFileRequestSchema,
  type DeleteFileResponse,
  type ExistsResponse,
  type ListFilesResponse,
  type MkdirResponse,
  type MoveFileResponse,
  type ReadFileResponse,
  type RenameFileResponse,
  type WriteFileResponse,
} from "../../protocol/files.ts";
import { InvalidRequestError } from "../rpc/errors.ts";
import { fileStreamInfo } from "../rpc/file-headers.ts";
import type {
  DeleteFileOptions,
  DeleteFileResult,
  ExistsResult,
  FileContent,
  FileListing,
  FileStream,
  ListFilesOptions,
  MkdirOptions,
  MkdirResult,
  MoveFileResult,
  MoveOptions,
  ReadFileOptions,
  RenameFileResult,
  WriteFileOptions,
  WriteFileResult,
  WriteStreamOptions,
} from "../rpc/files.ts";
import type { ContainerApi } from "./container-api.ts";
import { parseRequest, query } from "./request.ts";

export async function writeFile(api: ContainerApi, path: string, content: string, options: WriteFileOptions = {}): Promise<WriteFileResult> {
  const body = parseRequest(writeFileRequestSchema, { ...options, path, content }, "write request");
  return api.record<WriteFileResponse>("POST", FILE_ROUTES.write, body);
}

/** `PUT /api/files/stream?path=…&createParents=…&mode=…` with the caller's stream as the body. */
function uploadPath(path: string, options: WriteStreamOptions = {}): string {
  const raw = {
    path,
    ...(options.createParents === undefined ? {} : { createParents: String(options.createParents) }),
    ...(options.mode === undefined ? {} : { mode: typeof options.mode === "number" ? options.mode.toString(8) : options.mode }),
  };
  parseRequest(streamWriteQuerySchema, raw, "write request");
  return `${FILE_ROUTES.stream}${query(raw)}`;
}

export async function writeFileStream(
  api: ContainerApi,
  path: string,
  body: ReadableStream<Uint8Array>,
  options: WriteStreamOptions = {},
): Promise<WriteFileResult> {
  if (!(body instanceof ReadableStream)) throw new InvalidRequestError("writeFileStream needs a ReadableStream of bytes", "INVALID_REQUEST");
  return api.upload<WriteFileResponse>("PUT", uploadPath(path, options), body);
}

export async function readFile(api: ContainerApi, path: string, options: ReadFileOptions = {}): Promise<FileContent> {
  const body = parseRequest(readFileRequestSchema, { ...options, path }, "read request");
  return api.record<ReadFileResponse>("POST", FILE_ROUTES.read, body);
}

/** Opens the file's bytes; the caller gets the container's body as it streams. */
export async function openFile(api: ContainerApi, path: string): Promise<Omit<FileStream, "stream"> & { body: ReadableStream<Uint8Array> }> {
  const { path: checked } = parseRequest(readFileRequestSchema.pick({ path: true }), { path }, "read request");
  const response = await api.raw("GET", `${FILE_ROUTES.stream}${query({ path: checked })}`);
  return { ...fileStreamInfo(response.headers, checked), body: response.body! };
}

export async function mkdir(api: ContainerApi, path: string, options: MkdirOptions = {}): Promise<MkdirResult> {
  const body = parseRequest(mkdirRequestSchema, { ...options, path }, "mkdir request");
  return api.record<MkdirResponse>("POST", FILE_ROUTES.mkdir, body);
}

export async function deleteFile(api: ContainerApi, path: string, options: DeleteFileOptions = {}): Promise<DeleteFileResult> {
  const body = parseRequest(deleteFileRequestSchema, { ...options, path }, "delete request");
  return api.record<DeleteFileResponse>("POST", FILE_ROUTES.delete, body);
}

export async function renameFile(api: ContainerApi, oldPath: string, newPath: string, options: MoveOptions = {}): Promise<RenameFileResult> {
  const body = parseRequest(renameFileRequestSchema, { ...options, oldPath, newPath }, "rename request");
  return api.record<RenameFileResponse>("POST", FILE_ROUTES.rename, body);
}

export async function moveFile(
  api: ContainerApi,
  sourcePath: string,
  destinationPath: string,
  options: MoveOptions = {},
): Promise<MoveFileResult> {
  const body = parseRequest(moveFileRequestSchema, { ...options, sourcePath, destinationPath }, "move request");
  return api.record<MoveFileResponse>("POST", FILE_ROUTES.move, body);
}

export async function listFiles(api: ContainerApi, path: string | undefined, options: ListFilesOptions = {}): Promise<FileListing> {
  const body = parseRequest(listFilesRequestSchema, { ...options, ...(path === undefined ? {} : { path }) }, "list request");
  return api.record<ListFilesResponse>("POST", FILE_ROUTES.list, body);
}

export async function exists(api: ContainerApi, path: string): Promise<ExistsResult> {
  const body = parseRequest(existsRequestSchema, { path }, "exists request");
  return api.record<ExistsResponse>("POST", FILE_ROUTES.exists, body);
}
