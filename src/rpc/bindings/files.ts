/** Files, watching and git over /v1 (../files.ts, ../watch.ts, ../git.ts have their options). */
import {
  deleteFileRequestSchema,
  deleteResultSchema,
  existsRequestSchema,
  existsResultSchema,
  fileContentSchema,
  fileListingSchema,
  fileWrittenSchema,
  listFilesRequestSchema,
  mkdirRequestSchema,
  mkdirResultSchema,
  moveFileRequestSchema,
  moveResultSchema,
  readFileRequestSchema,
  renameFileRequestSchema,
  renameResultSchema,
  streamWriteQuerySchema,
  writeFileRequestSchema,
} from "../../../protocol/files.ts";
import { gitCloneRequestSchema, gitCloneResultSchema } from "../../../protocol/git.ts";
import { changesRequestSchema, changesResultSchema, watchRequestSchema } from "../../../protocol/watch.ts";
import type { Binding } from "./binding.ts";

export const fileBindings = {
  writeFile: {
    verb: "POST",
    path: "/files/write",
    args: [{ body: "path" }, { body: "content" }, "body"],
    body: writeFileRequestSchema,
    response: fileWrittenSchema,
    summary: "Write a whole file (text or base64, up to 16 MiB)",
  },
  writeFileStream: {
    verb: "PUT",
    path: "/files/content",
    args: [{ query: "path" }, "body", "query"],
    query: streamWriteQuerySchema,
    response: fileWrittenSchema,
    summary: "Upload a file as the raw request body (streamed, any size up to the container's limit)",
    // Raw bytes in: the body is the file.
    byHand: ["route", "client", "openapi"],
  },
  readFile: {
    verb: "POST",
    path: "/files/read",
    args: [{ body: "path" }, "body"],
    body: readFileRequestSchema,
    response: fileContentSchema,
    summary: "Read a whole file (up to 16 MiB) with its size, MIME type and binary flag",
  },
  readFileStream: {
    verb: "GET",
    path: "/files/content",
    args: [{ query: "path" }],
    summary: "Download a file's bytes (streamed; headers x-file-size, x-file-binary, x-file-path)",
    // Raw bytes out, with the file's facts in headers.
    byHand: ["route", "client", "openapi"],
  },
  mkdir: { verb: "POST", path: "/files/mkdir", args: [{ body: "path" }, "body"], body: mkdirRequestSchema, response: mkdirResultSchema, summary: "Make a directory" },
  deleteFile: {
    verb: "POST",
    path: "/files/delete",
    args: [{ body: "path" }, "body"],
    body: deleteFileRequestSchema,
    response: deleteResultSchema,
    summary: "Delete a file (a directory with recursive)",
  },
  renameFile: {
    verb: "POST",
    path: "/files/rename",
    args: [{ body: "oldPath" }, { body: "newPath" }, "body"],
    body: renameFileRequestSchema,
    response: renameResultSchema,
    summary: "Rename to exactly newPath",
  },
  moveFile: {
    verb: "POST",
    path: "/files/move",
    args: [{ body: "sourcePath" }, { body: "destinationPath" }, "body"],
    body: moveFileRequestSchema,
    response: moveResultSchema,
    summary: "Move (into destinationPath when it is a directory)",
  },
  listFiles: { verb: "POST", path: "/files/list", args: [{ body: "path" }, "body"], body: listFilesRequestSchema, response: fileListingSchema, summary: "List a directory" },
  exists: { verb: "POST", path: "/files/exists", args: [{ body: "path" }], body: existsRequestSchema, response: existsResultSchema, summary: "Whether a path exists, and its type" },
  watch: {
    verb: "POST",
    path: "/files/watch",
    args: [{ body: "path" }, "body"],
    body: watchRequestSchema,
    answer: "sse",
    summary:
      "Watch a directory (recursive by default; include/exclude globs with *, ** and ?; .git and node_modules left out unless globs are given). " +
      "A move is reported as a delete and a create; a reader too slow for the changes gets an overflow event with the number dropped.",
    described: "Changes until the caller goes away (or the directory is removed).",
    events: "watching, change (kind create|modify|delete, path relative to the directory, isDirectory), overflow, stopped, error",
  },
  checkChanges: {
    verb: "POST",
    path: "/files/changes",
    args: [{ body: "path" }, "body"],
    body: changesRequestSchema,
    response: changesResultSchema,
    summary:
      "Whether anything under a path changed since a version (a digest of names, types, sizes and modification times: needs no open watch, holds across restarts)",
  },
  gitCheckout: {
    verb: "POST",
    path: "/git/clone",
    args: [{ body: "repoUrl" }, "body"],
    body: gitCloneRequestSchema,
    response: gitCloneResultSchema,
    summary:
      "Clone a git repository into the workspace (https, http, ssh, user@host:path or file URLs), run in the sandbox like a command; " +
      "400 INVALID_GIT_URL for other URLs, 422 GIT_CLONE_FAILED (with git's stderr) when git fails, 408 GIT_CLONE_TIMEOUT when the time limit runs out",
    described: "Cloned",
  },
} as const satisfies Record<string, Binding>;
