/**
 * `uploadFiles` and `downloadFiles` of the deepagents backend, through the sandbox's file API: bytes
 * both ways (any content, any size: the streamed routes), one result per path with the error codes
 * deepagents knows. A file's own problem is its result; not reaching the service at all is thrown.
 */
import { SandboxError, type FileDownloadResponse, type FileOperationError, type FileUploadResponse } from "deepagents";
import { SandboxError as ServiceError, type SandboxClient } from "../../client/index.ts";

/** Service error codes as deepagents names them; any other answer about a file is an invalid path. */
const FILE_ERRORS: Partial<Record<string, FileOperationError>> = {
  FILE_NOT_FOUND: "file_not_found",
  IS_A_DIRECTORY: "is_directory",
  PERMISSION_DENIED: "permission_denied",
  PATH_OUTSIDE_WORKSPACE: "permission_denied",
};

/** Failures of the service or the way to it, not of one file: they fail the whole call. */
const NOT_THE_FILE = new Set(["CONNECTION_FAILED", "UNAUTHORIZED", "AUTH_NOT_CONFIGURED", "CONTAINER_UNAVAILABLE", "ISOLATION_UNAVAILABLE", "INTERNAL_ERROR"]);

export async function uploadFiles(client: SandboxClient, files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
  const results: FileUploadResponse[] = [];
  for (const [path, content] of files) {
    try {
      await client.writeFileStream(path, inChunks(content));
      results.push({ path, error: null });
    } catch (error) {
      results.push({ path, error: fileError(error, "upload") });
    }
  }
  return results;
}

export async function downloadFiles(client: SandboxClient, paths: string[]): Promise<FileDownloadResponse[]> {
  const results: FileDownloadResponse[] = [];
  for (const path of paths) {
    try {
      const content = new Uint8Array(await new Response(await client.readFileStream(path)).arrayBuffer());
      results.push({ path, content, error: null });
    } catch (error) {
      results.push({ path, content: null, error: fileError(error, "download") });
    }
  }
  return results;
}

/** Bytes of one upload per chunk: transports move moderate chunks much faster than one huge one. */
const UPLOAD_CHUNK_BYTES = 64 * 1024;

function inChunks(content: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= content.length) return controller.close();
      controller.enqueue(content.subarray(at, at + UPLOAD_CHUNK_BYTES));
      at += UPLOAD_CHUNK_BYTES;
    },
  });
}

/** The per-file error of a failed transfer, or a thrown SandboxError when the failure is not the file's. */
function fileError(error: unknown, operation: "upload" | "download"): FileOperationError {
  if (error instanceof ServiceError && !NOT_THE_FILE.has(error.code)) return FILE_ERRORS[error.code] ?? "invalid_path";
  const message = error instanceof Error ? error.message : String(error);
  throw new SandboxError(`File ${operation} failed: ${message}`, "FILE_OPERATION_FAILED", error instanceof Error ? error : undefined);
}
