/**
 * `writeFiles` of an EdgeSandbox: Mastra's bulk upload, through the sandbox's file API (binary-safe,
 * parents created, an explicit mode applied). An aborted write stops before the next file.
 */
import { SandboxAbortError, validateSandboxFileMode, type SandboxFileInput, type WriteFilesOptions } from "@mastra/core/workspace";
import type { SandboxClient } from "../../client/index.ts";

export async function writeFiles(client: SandboxClient, files: SandboxFileInput[], options: WriteFilesOptions = {}): Promise<void> {
  for (const file of files) if (file.mode !== undefined) validateSandboxFileMode(file.mode);
  for (const file of files) {
    if (options.abortSignal?.aborted) throw new SandboxAbortError("writeFiles", options.abortSignal.reason);
    // A Buffer is a Uint8Array: bytes are written as bytes.
    await client.writeFile(file.path, file.content, file.mode === undefined ? {} : { mode: file.mode });
  }
}
