/**
 * Reading files: whole (JSON, capped, text or base64) or as a byte stream of any size.
 */
import type { FileHandle } from "node:fs/promises";
import type { Readable } from "node:stream";
import { FILE_LIMITS, FILE_ROUTES, type FileContent, type FileEncoding } from "../../protocol/files.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { openForRead } from "./descriptors.ts";
import { locate } from "./locate.ts";
import { looksBinary, mimeTypeOf } from "./mime.ts";
import type { PathPolicy } from "./paths.ts";

/**
 * A whole file as read: its bytes and how they are to be sent (FileContent's fields, with the bytes
 * in place of `content`). Answers encode the bytes straight into their JSON (http/file-content.ts),
 * never through a string of the whole file.
 */
export type FileBytes = Omit<FileContent, "content"> & { bytes: Buffer };

/** Reads a whole file. Without an encoding, text is sent as utf8 and binary as base64. */
export async function readFileBytes(
  policy: PathPolicy,
  input: string,
  options: { encoding?: FileEncoding; maxBytes?: number } = {},
): Promise<FileBytes> {
  const { handle, target, size } = await openFile(policy, input);
  try {
    const maxBytes = options.maxBytes ?? FILE_LIMITS.maxJsonFileBytes;
    if (size > maxBytes) throw tooLargeForJson(input, size, maxBytes);
    const bytes = await readWhole(handle, size, maxBytes, input);
    const isBinary = looksBinary(bytes.subarray(0, FILE_LIMITS.binarySniffBytes), bytes.length <= FILE_LIMITS.binarySniffBytes);
    return {
      path: target.display,
      bytes,
      encoding: options.encoding ?? (isBinary ? "base64" : "utf8"),
      size: bytes.length,
      mimeType: mimeTypeOf(target.real, isBinary),
      isBinary,
    };
  } finally {
    await handle.close();
  }
}

/**
 * The file's bytes, up to the size it had when opened (as FileHandle.readFile does, without its
 * second stat and chunked reads). Files that report no size (those in /proc) are read to their end.
 */
async function readWhole(handle: FileHandle, size: number, maxBytes: number, input: string): Promise<Buffer> {
  if (size === 0) {
    const bytes = await handle.readFile();
    if (bytes.length > maxBytes) throw tooLargeForJson(input, bytes.length, maxBytes);
    return bytes;
  }
  const buffer = Buffer.allocUnsafe(size);
  let length = 0;
  while (length < size) {
    const { bytesRead } = await handle.read(buffer, length, size - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return buffer.subarray(0, length);
}

export interface FileDownload {
  path: string;
  size: number;
  mimeType: string;
  isBinary: boolean;
  /** The file's bytes from the start; closes the file when it ends or is destroyed. */
  stream: Readable;
}

/** Opens a file for streaming out. Only the first few KiB are read up front (to detect binary). */
export async function openFileDownload(policy: PathPolicy, input: string): Promise<FileDownload> {
  const { handle, target, size } = await openFile(policy, input);
  try {
    const sample = Buffer.alloc(Math.min(size, FILE_LIMITS.binarySniffBytes));
    const { bytesRead } = await handle.read(sample, 0, sample.length, 0);
    const isBinary = looksBinary(sample.subarray(0, bytesRead), bytesRead >= size);
    const stream = handle.createReadStream({ start: 0, highWaterMark: 1024 * 1024 });
    return { path: target.display, size, mimeType: mimeTypeOf(target.real, isBinary), isBinary, stream };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The file `input` names, open for reading, with where it was found and its size when opened. */
async function openFile(
  policy: PathPolicy,
  input: string,
): Promise<{ handle: FileHandle; target: { display: string; real: string }; size: number }> {
  const entry = await locate(policy, input, "read");
  try {
    const { handle, size } = await openForRead(entry);
    return { handle, target: { display: entry.display, real: entry.real }, size };
  } finally {
    await entry.dir.close();
  }
}

function tooLargeForJson(input: string, size: number, maxBytes: number): ServiceError {
  return new ServiceError(
    "PAYLOAD_TOO_LARGE",
    `${input}: ${size} bytes is more than a JSON read returns (${maxBytes}); use GET ${FILE_ROUTES.stream}`,
    { path: input, size, maxBytes },
  );
}
