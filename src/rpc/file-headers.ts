/**
 * What the headers of a file download say about the file. The container's `GET /api/files/stream`
 * and the Worker's `GET /v1/sandboxes/:id/files/content` send the same ones.
 */
import { FILE_STREAM_HEADERS } from "../../protocol/files.ts";
import type { FileStream } from "./files.ts";

export function fileStreamInfo(headers: Headers, fallbackPath: string): Omit<FileStream, "stream"> {
  const encodedPath = headers.get(FILE_STREAM_HEADERS.path);
  return {
    path: encodedPath ? decodeURIComponent(encodedPath) : fallbackPath,
    size: Number(headers.get(FILE_STREAM_HEADERS.size) ?? headers.get("content-length") ?? 0),
    mimeType: (headers.get("content-type") ?? "application/octet-stream").split(";")[0]!.trim(),
    isBinary: headers.get(FILE_STREAM_HEADERS.isBinary) === "true",
  };
}

/** The headers that describe a file download, for a response that streams it on. */
export function fileStreamHeaders(file: Omit<FileStream, "stream">, contentType: string): Record<string, string> {
  return {
    "content-type": contentType,
    "content-length": String(file.size),
    [FILE_STREAM_HEADERS.size]: String(file.size),
    [FILE_STREAM_HEADERS.isBinary]: String(file.isBinary),
    [FILE_STREAM_HEADERS.path]: encodeURIComponent(file.path),
    "cache-control": "no-store",
  };
}
