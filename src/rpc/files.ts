/**
 * Files as they cross between a caller and the Sandbox Durable Object or the /v1 API: the options
 * each call takes, and its result (the container's response without its envelope).
 */
import type {
  ExistsResponse,
  FileContent,
  FileEncoding,
  ListFilesResponse,
  MkdirResponse,
  MoveFileResponse,
  DeleteFileResponse,
  RenameFileResponse,
  WriteFileResponse,
} from "../../protocol/files.ts";
import type { WithoutEnvelope } from "../../protocol/process.ts";

export type { FileContent };

export interface WriteFileOptions {
  /** How `content` is encoded (default utf8). */
  encoding?: FileEncoding;
  /** Create missing parent directories (default true). */
  createParents?: boolean;
  /** Permission bits, e.g. 0o755 or "755". */
  mode?: number | string;
}

export type WriteStreamOptions = Omit<WriteFileOptions, "encoding">;

export type WriteFileResult = WithoutEnvelope<WriteFileResponse>;

export interface ReadFileOptions {
  /** Default: utf8 for text, base64 for binary files. */
  encoding?: FileEncoding;
}

/** A file opened for reading as a byte stream, with what is known about it up front. */
export interface FileStream {
  path: string;
  size: number;
  mimeType: string;
  isBinary: boolean;
  stream: ReadableStream<Uint8Array>;
}

export interface MkdirOptions {
  /** Create parents and accept an existing directory (default false). */
  recursive?: boolean;
  mode?: number | string;
}

export type MkdirResult = WithoutEnvelope<MkdirResponse>;

export interface DeleteFileOptions {
  /** Needed to delete a directory with what is in it. */
  recursive?: boolean;
}

export type DeleteFileResult = WithoutEnvelope<DeleteFileResponse>;

export interface MoveOptions {
  /** Replace an existing target (default false). */
  overwrite?: boolean;
}

export type RenameFileResult = WithoutEnvelope<RenameFileResponse>;
export type MoveFileResult = WithoutEnvelope<MoveFileResponse>;

export interface ListFilesOptions {
  recursive?: boolean;
  /** Include names starting with "." (default false). */
  includeHidden?: boolean;
  maxEntries?: number;
}

export type FileListing = WithoutEnvelope<ListFilesResponse>;
export type ExistsResult = WithoutEnvelope<ExistsResponse>;
