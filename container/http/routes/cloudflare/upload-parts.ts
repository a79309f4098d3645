/**
 * Sending byte ranges of one file to presigned part URLs, as Cloudflare's Durable Object asks for a
 * multipart upload of a backup to R2: each part is a PUT of `size` bytes from `offset`, streamed from
 * the file (never held whole), a few at a time; the reply names each part's ETag, which the Durable
 * Object hands back to R2 to complete the upload. The file is opened once, by the safe path walk.
 */
import type { FileHandle } from "node:fs/promises";
import { Readable } from "node:stream";
import { ServiceError } from "../../../../server-kit/service-error.ts";
import { openForRead } from "../../../files/descriptors.ts";
import { locate } from "../../../files/locate.ts";
import type { PathPolicy } from "../../../files/paths.ts";

/** Parts in flight at once: enough to fill a link to object storage, few enough for 2 cores. */
const PARALLEL_PARTS = 4;

export interface UploadPart {
  partNumber: number;
  url: string;
  offset: number;
  size: number;
}

export interface UploadedPart {
  partNumber: number;
  etag: string;
}

function uploadFailed(part: UploadPart, why: string): ServiceError {
  return new ServiceError("BACKUP_FAILED", `part ${part.partNumber}: ${why}`, { partNumber: part.partNumber });
}

async function uploadPart(handle: FileHandle, part: UploadPart, signal: AbortSignal): Promise<UploadedPart> {
  const body =
    part.size === 0
      ? Buffer.alloc(0)
      : (Readable.toWeb(handle.createReadStream({ start: part.offset, end: part.offset + part.size - 1, autoClose: false, highWaterMark: 1024 * 1024 })) as ReadableStream<Uint8Array>);
  let response: Response;
  try {
    response = await fetch(part.url, {
      method: "PUT",
      body,
      headers: { "content-length": String(part.size), "content-type": "application/octet-stream" },
      duplex: "half",
      signal,
    } as RequestInit);
  } catch (error) {
    throw uploadFailed(part, `the upload did not complete: ${(error as Error).message}`);
  }
  const text = await response.text().catch(() => "");
  if (!response.ok) throw uploadFailed(part, `the part URL answered HTTP ${response.status} ${text.slice(0, 200)}`.trim());
  const etag = response.headers.get("etag");
  if (!etag) throw uploadFailed(part, "the part URL answered without an ETag");
  return { partNumber: part.partNumber, etag };
}

/** Uploads every part of the file `input` names; the first failure stops the others. */
export async function uploadFileParts(policy: PathPolicy, input: string, parts: readonly UploadPart[]): Promise<UploadedPart[]> {
  const entry = await locate(policy, input, "read");
  let handle: FileHandle;
  let size: number;
  try {
    ({ handle, size } = await openForRead(entry));
  } finally {
    await entry.dir.close();
  }
  try {
    const beyond = parts.find((part) => part.offset + part.size > size);
    if (beyond) {
      throw new ServiceError("INVALID_REQUEST", `part ${beyond.partNumber} ends past the end of ${input} (${size} bytes)`, { partNumber: beyond.partNumber, size });
    }
    const abort = new AbortController();
    const uploaded: UploadedPart[] = [];
    let next = 0;
    const worker = async () => {
      while (next < parts.length && !abort.signal.aborted) {
        const part = parts[next++]!;
        uploaded.push(await uploadPart(handle, part, abort.signal));
      }
    };
    let failure: unknown;
    const workers = Array.from({ length: Math.min(PARALLEL_PARTS, parts.length) }, () =>
      worker().catch((error: unknown) => {
        failure ??= error;
        abort.abort();
      }),
    );
    await Promise.all(workers);
    if (failure !== undefined) throw failure;
    return uploaded.sort((a, b) => a.partNumber - b.partNumber);
  } finally {
    await handle.close();
  }
}
