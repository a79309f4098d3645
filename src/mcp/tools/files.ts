/**
 * The workspace's files as tools: read (text as text, images as image content), write, list, and
 * search by content (grep run in the sandbox, so it reads only what the sandbox may read).
 * Relative paths are against /workspace; absolute ones may name anything in the sandbox, as on /v1.
 */
import { z } from "zod";
import { listFilesRequestSchema, readFileRequestSchema, writeFileRequestSchema } from "../../../protocol/files.ts";
import { errorFromCode } from "../../rpc/errors.ts";
import { defineTool, jsonResult } from "../tool.ts";

/** Image types a client can show as they are: sent as image content, not base64 text. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** Matching lines search_files returns at most (`maxResults` may ask for fewer). */
export const MAX_SEARCH_RESULTS = 1000;
/** Bytes of grep output read: matches past it are dropped (a minified file's one line can be huge). */
const SEARCH_OUTPUT_BYTES = 1024 * 1024;

const path = readFileRequestSchema.shape.path;

export const readFile = defineTool({
  name: "read_file",
  title: "Read a file",
  description: "Reads a file of the sandbox (up to 16 MiB). Text comes back as text, PNG/JPEG/GIF/WebP images as images, other binary files as base64.",
  input: z.strictObject({ path: path.describe("Path of the file; relative paths are against /workspace") }),
  annotations: { readOnlyHint: true },
  async run(args, call) {
    const file = await call.sandbox.readFile(args.path);
    if (file.encoding === "base64" && IMAGE_TYPES.has(file.mimeType)) {
      return { content: [{ type: "image", data: file.content, mimeType: file.mimeType }], structuredContent: { path: file.path, size: file.size, mimeType: file.mimeType } };
    }
    return {
      content: [{ type: "text", text: file.content }],
      structuredContent: { path: file.path, size: file.size, mimeType: file.mimeType, encoding: file.encoding },
    };
  },
});

export const writeFile = defineTool({
  name: "write_file",
  title: "Write a file",
  description: "Writes a file of the sandbox, creating missing parent directories; an existing file is replaced.",
  input: z.strictObject({
    path: writeFileRequestSchema.shape.path.describe("Path of the file; relative paths are against /workspace"),
    content: writeFileRequestSchema.shape.content.describe("The file's content"),
    encoding: writeFileRequestSchema.shape.encoding.describe("utf8 (default) or base64 for binary content"),
  }),
  annotations: { destructiveHint: true, idempotentHint: true },
  async run({ path, content, ...options }, call) {
    return jsonResult({ ...(await call.sandbox.writeFile(path, content, options)) });
  },
});

export const listFiles = defineTool({
  name: "list_files",
  title: "List files",
  description: "Lists a directory of the sandbox (default /workspace): names, types, sizes and modification times.",
  input: z.strictObject({
    path: listFilesRequestSchema.shape.path.describe("Directory to list (default /workspace)"),
    recursive: listFilesRequestSchema.shape.recursive.describe("Include everything below, not only the directory's own entries"),
    includeHidden: listFilesRequestSchema.shape.includeHidden.describe("Include names that start with a dot"),
  }),
  annotations: { readOnlyHint: true },
  async run({ path, ...options }, call) {
    const listing = await call.sandbox.listFiles(path, options);
    return jsonResult({
      path: listing.path,
      files: listing.files.map(({ relativePath, type, size, modifiedAt }) => ({ path: relativePath, type, size, modifiedAt })),
      truncated: listing.truncated,
    });
  },
});

/** `file:line:text` as grep -n prints it (file names with ':' are not split wrongly: the line number is the first number field). */
const GREP_LINE = /^(.*?):(\d+):(.*)$/;

export const searchFiles = defineTool({
  name: "search_files",
  title: "Search files",
  description: "Searches the text files under a directory of the sandbox (default /workspace) for a regular expression (grep -E); returns the matching lines with file and line number.",
  input: z.strictObject({
    pattern: z.string().min(1).max(4096).describe("Extended regular expression (grep -E)"),
    path: listFilesRequestSchema.shape.path.describe("Directory or file to search (default /workspace)"),
    glob: z.string().min(1).max(256).optional().describe('Only files whose name matches this glob, e.g. "*.ts"'),
    ignoreCase: z.boolean().optional().describe("Match without regard to case"),
    maxResults: z.number().int().positive().max(MAX_SEARCH_RESULTS).optional().describe(`Matching lines to return at most (default and cap ${MAX_SEARCH_RESULTS})`),
  }),
  annotations: { readOnlyHint: true },
  async run({ pattern, path = ".", glob, ignoreCase, maxResults = MAX_SEARCH_RESULTS }, call) {
    const where = await call.sandbox.exists(path);
    if (!where.exists) throw errorFromCode("FILE_NOT_FOUND", `No such file or directory: ${path}`);
    const flags = ["-rnIE", ...(ignoreCase ? ["-i"] : []), ...(glob === undefined ? [] : [`--include=${glob}`])];
    // No shell: the pattern and path are arguments as given, never a command line.
    const result = await call.sandbox.exec("grep", { args: [...flags, "-e", pattern, "--", path], maxOutputBytes: SEARCH_OUTPUT_BYTES, isolated: true });
    // grep: 0 matches found, 1 none, 2 trouble (a bad expression, an unreadable file).
    if (result.exitCode > 1 && result.stdout === "") throw errorFromCode("INVALID_REQUEST", `search failed: ${result.stderr.trim()}`);
    const lines = result.stdout.split("\n").filter((line) => line !== "");
    const matches = lines.slice(0, maxResults).flatMap((line) => {
      const match = GREP_LINE.exec(line);
      // Under the default "." grep names files "./src/a.ts": said as the workspace-relative "src/a.ts".
      return match ? [{ path: match[1]!.replace(/^\.\//, ""), line: Number(match[2]), text: match[3]! }] : [];
    });
    return jsonResult({ matches, truncated: lines.length > maxResults || result.stdoutTruncated === true });
  },
});
