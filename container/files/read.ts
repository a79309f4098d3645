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

/** Reads a whole file. Without an encoding, text comes back as utf8 and binary as base64. */
export async function readFileContent(
  policy: PathPolicy,
  input: string,
  options: { encoding?: FileEncoding; maxBytes?: number } = {},
): Promise<FileContent> {
  const { handle, target } = await openFile(policy, input);
  try {
    const { size } = await handle.stat();
    const maxBytes = options.maxBytes ?? FILE_LIMITS.maxJsonFileBytes;
    if (size > maxBytes) throw tooLargeForJson(input, size, maxBytes);
    const bytes = await handle.readFile();
    // The file may have grown since the stat.
    if (bytes.length > maxBytes) throw tooLargeForJson(input, bytes.length, maxBytes);
    const isBinary = looksBinary(bytes.subarray(0, FILE_LIMITS.binarySniffBytes), bytes.length <= FILE_LIMITS.binarySniffBytes);
    const encoding = options.encoding ?? (isBinary ? "base64" : "utf8");
    return {
      path: target.display,
      content: bytes.toString(encoding),
      encoding,
      size: bytes.length,
      mimeType: mimeTypeOf(target.real, isBinary),
      isBinary,
    };
  } finally {
    await handle.close();
  }
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
  const { handle, target } = await openFile(policy, input);
  try {
    const { size } = await handle.stat();
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

/** The file `input` names, open for reading, with where it was found. */
async function openFile(policy: PathPolicy, input: string): Promise<{ handle: FileHandle; target: { display: string; real: string } }> {
  const entry = await locate(policy, input, "read");
  try {
    return { handle: await openForRead(entry), target: { display: entry.display, real: entry.real } };
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
