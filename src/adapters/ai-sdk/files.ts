/**
 * The file half of the AI SDK's sandbox session on the service's file API. Paths are the
 * contract's: relative ones resolve against the workspace (the session's default working
 * directory), absolute ones are used as they are: anywhere in the sandbox, as its commands see it
 * (the service refuses only its own process, with PERMISSION_DENIED). Reads stream any size; a missing file is `null`
 * as the contract says, never an error; `stat` follows symbolic links (the sandbox's own `stat -L`).
 */
import type { Experimental_SandboxDirectoryEntry as DirectoryEntry, Experimental_SandboxFileStat as FileStat } from "ai";
import type { SandboxClient } from "../../client/index.ts";
import { asHarness, EdgeSandboxError, hasCode } from "./errors.ts";

const UTF8 = /^utf-?8$/i;

function assertUtf8(encoding: string | undefined): void {
  if (encoding !== undefined && !UTF8.test(encoding)) {
    throw new EdgeSandboxError({ message: `text encoding ${JSON.stringify(encoding)} is not supported: files are read and written as UTF-8`, code: "INVALID_REQUEST", context: { encoding } });
  }
}

export async function readFile(client: SandboxClient, path: string): Promise<ReadableStream<Uint8Array> | null> {
  return asHarness(async () => {
    try {
      return await client.readFileStream(path);
    } catch (error) {
      if (hasCode(error, "FILE_NOT_FOUND")) return null;
      throw error;
    }
  });
}

export async function readBinaryFile(client: SandboxClient, path: string): Promise<Uint8Array | null> {
  const stream = await readFile(client, path);
  return stream === null ? null : new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The file as text, or lines `startLine`..`endLine` of it (1-based, inclusive; past the end reads to EOF). */
export async function readTextFile(client: SandboxClient, options: { path: string; encoding?: string; startLine?: number; endLine?: number }): Promise<string | null> {
  assertUtf8(options.encoding);
  const bytes = await readBinaryFile(client, options.path);
  if (bytes === null) return null;
  const text = new TextDecoder().decode(bytes);
  if (options.startLine === undefined && options.endLine === undefined) return text;
  const lines = text.split(/(?<=\n)/);
  return lines.slice(Math.max(0, (options.startLine ?? 1) - 1), options.endLine ?? lines.length).join("");
}

export async function writeFile(client: SandboxClient, path: string, content: ReadableStream<Uint8Array>): Promise<void> {
  await asHarness(() => client.writeFileStream(path, content, { createParents: true }));
}

export async function writeBinaryFile(client: SandboxClient, path: string, content: Uint8Array): Promise<void> {
  await writeFile(client, path, new Blob([content as Uint8Array<ArrayBuffer>]).stream());
}

export async function writeTextFile(client: SandboxClient, options: { path: string; content: string; encoding?: string }): Promise<void> {
  assertUtf8(options.encoding);
  await writeBinaryFile(client, options.path, new TextEncoder().encode(options.content));
}

/** `file`, `directory` or `other` (symbolic links followed), and the size; null when nothing is there. */
export async function stat(client: SandboxClient, path: string): Promise<FileStat | null> {
  return asHarness(async () => {
    const result = await client.exec("stat", { args: ["-L", "-c", "%F|%s", "--", path], isolated: true });
    if (result.exitCode !== 0) {
      // Nothing there: the path, or a folder on its way, is missing (or a file stands where a folder would be).
      if (/No such file or directory|Not a directory/.test(result.stderr)) return null;
      const code = /Permission denied/.test(result.stderr) ? "PERMISSION_DENIED" : "INTERNAL_ERROR";
      throw new EdgeSandboxError({ message: `stat ${path}: ${result.stderr.trim()}`, code, context: { path } });
    }
    const [kind = "", size = "0"] = result.stdout.trim().split("|");
    const type = kind.endsWith("directory") ? "directory" : kind.startsWith("regular") ? "file" : "other";
    return { type, size: Number(size) };
  });
}

/** The directory's entries (symbolic links as `symlink`); null when it does not exist, NOT_A_DIRECTORY for a file. */
export async function listDirectory(client: SandboxClient, path: string): Promise<DirectoryEntry[] | null> {
  return asHarness(async () => {
    try {
      const listing = await client.listFiles(path, { includeHidden: true });
      return listing.files.map((entry) => ({ name: entry.name, type: entry.type }));
    } catch (error) {
      if (hasCode(error, "FILE_NOT_FOUND")) return null;
      throw error;
    }
  });
}

/** Deletes one file or symbolic link: true when it was there, false when not; IS_A_DIRECTORY for a directory. */
export async function deleteFile(client: SandboxClient, path: string): Promise<boolean> {
  return asHarness(async () => {
    const found = await client.exists(path);
    if (!found.exists) return false;
    if (found.type === "directory") throw new EdgeSandboxError({ message: `${path} is a directory: deleteFile deletes files`, code: "IS_A_DIRECTORY", context: { path } });
    try {
      await client.deleteFile(path);
      return true;
    } catch (error) {
      if (hasCode(error, "FILE_NOT_FOUND")) return false;
      throw error;
    }
  });
}
