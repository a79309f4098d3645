/**
 * Writing files, atomically: bytes go to a temporary file beside the target, which is renamed over it
 * only when everything arrived. A failed or oversized upload leaves the old file untouched, and a
 * reader never sees half a file. Both files are named inside the target's directory held open, so
 * neither can be placed elsewhere by a symlink. A streamed upload holds about two batches of its bytes
 * in memory at a time: one being written, the next being read.
 */
import { randomBytes } from "node:crypto";
import { fchmodSync, lstatSync } from "node:fs";
import { rename, unlink, type FileHandle } from "node:fs/promises";
import type { WriteFileResponse } from "../../protocol/files.ts";
import type { SuccessEnvelope } from "../../protocol/process.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { createExclusive } from "./descriptors.ts";
import { toFileError } from "./errors.ts";
import { locate } from "./locate.ts";
import type { PathPolicy } from "./paths.ts";

export interface WriteOptions {
  /** Create missing parent directories (default true). */
  createParents?: boolean;
  /** Permission bits; default: the replaced file's, else 0644 (less the umask). */
  mode?: number;
}

export interface StreamWriteOptions extends WriteOptions {
  /** Refuse (PAYLOAD_TOO_LARGE) once more than this many bytes arrive. */
  maxBytes: number;
}

/** A written file as the route answers it (the protocol's response without the envelope). */
export type WriteResult = Omit<WriteFileResponse, keyof SuccessEnvelope>;

export async function writeFileContent(
  policy: PathPolicy,
  input: string,
  data: Uint8Array,
  options: WriteOptions = {},
): Promise<WriteResult> {
  return writeAtomically(policy, input, options, async (handle) => {
    await handle.writeFile(data);
    return data.length;
  });
}

export async function writeFileFromStream(
  policy: PathPolicy,
  input: string,
  source: AsyncIterable<Uint8Array>,
  options: StreamWriteOptions,
): Promise<WriteResult> {
  return writeAtomically(policy, input, options, async (handle) => {
    // Chunks off the socket are small (≈64 KiB): they are gathered up to BATCH_BYTES and written with
    // one writev, so throughput is bound by the disk rather than by one syscall and await per chunk.
    // While one batch is written the next is read, so the socket and the disk work at once; at most
    // one write is in flight, so the upload holds about two batches in memory.
    let total = 0;
    let batch: Uint8Array[] = [];
    let batchBytes = 0;
    let inFlight: Promise<void> | undefined;
    const flush = async () => {
      if (inFlight) await inFlight;
      const chunks = batch;
      batch = [];
      batchBytes = 0;
      inFlight = writeAll(handle, chunks);
      // Its failure is thrown where it is awaited (the next flush, or the end), not left unhandled
      // while the next batch is read.
      inFlight.catch(() => {});
    };
    try {
      for await (const chunk of source) {
        total += chunk.length;
        if (total > options.maxBytes) {
          throw new ServiceError("PAYLOAD_TOO_LARGE", `${input}: upload exceeds ${options.maxBytes} bytes`, {
            path: input,
            maxBytes: options.maxBytes,
          });
        }
        batch.push(chunk);
        batchBytes += chunk.length;
        if (batchBytes >= BATCH_BYTES) await flush();
      }
      await flush();
      await inFlight;
      return total;
    } finally {
      // An upload cut off or refused mid-way: the write in flight lands before the file is closed and
      // its temporary removed (writeAtomically), so nothing writes to a file that is gone.
      await inFlight?.catch(() => {});
    }
  });
}

const BATCH_BYTES = 1024 * 1024;

/** Writes `chunks` at the file's position, all of them (a short writev is continued). */
async function writeAll(handle: FileHandle, chunks: Uint8Array[]): Promise<void> {
  let pending = chunks;
  while (pending.length > 0) {
    const { bytesWritten } = await handle.writev(pending);
    pending = dropWritten(pending, bytesWritten);
  }
}

/** What is left of `chunks` after the first `written` bytes (a short writev). */
function dropWritten(chunks: Uint8Array[], written: number): Uint8Array[] {
  let skip = written;
  let index = 0;
  while (index < chunks.length && skip >= chunks[index]!.length) skip -= chunks[index++]!.length;
  const rest = chunks.slice(index);
  if (rest.length > 0 && skip > 0) rest[0] = rest[0]!.subarray(skip);
  return rest;
}

/** What stands at `at` now (not following a symlink), or undefined when nothing does. */
function existingEntry(at: string, input: string) {
  try {
    return lstatSync(at);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw toFileError(error, input);
  }
}

async function writeAtomically(
  policy: PathPolicy,
  input: string,
  options: WriteOptions,
  fill: (handle: FileHandle) => Promise<number>,
): Promise<WriteResult> {
  const { dir, name, display } = await locate(policy, input, "write", { createParents: options.createParents ?? true });
  try {
    // The lstat and chmod below are made on the event loop, like the walk's lookups (dir-handle.ts):
    // they touch the inode only, where a trip through libuv's thread pool costs two thread wake-ups.
    const existing = existingEntry(dir.at(name), input);
    if (existing?.isDirectory()) throw new ServiceError("IS_A_DIRECTORY", `${input}: is a directory`, { path: input });
    // Only the permission bits carry over: a setuid or setgid bit left by a command must not end up on
    // content the server wrote (as its own user).
    const mode = options.mode ?? (existing ? existing.mode & 0o777 : 0o644);
    const temporary = `.${name}.upload-${randomBytes(6).toString("hex")}`;
    const handle = await createExclusive(dir, temporary, input, mode);
    let renamed = false;
    try {
      const bytesWritten = await fill(handle);
      // Explicit modes are applied as given, not reduced by the umask.
      if (options.mode !== undefined || existing) fchmodSync(handle.fd, mode);
      await handle.close();
      await rename(dir.at(temporary), dir.at(name));
      renamed = true;
      return { path: display, bytesWritten };
    } catch (error) {
      throw toFileError(error, input);
    } finally {
      if (!renamed) {
        await handle.close().catch(() => {});
        await unlink(dir.at(temporary)).catch(() => {});
      }
    }
  } finally {
    await dir.close();
  }
}
