/**
 * What a file holds: a MIME type from its extension, and whether its bytes are binary (a NUL byte or
 * invalid UTF-8 in the first few KiB), which decides the default encoding of a read.
 */
import path from "node:path";

const BY_EXTENSION: Record<string, string> = {
  ".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
  ".html": "text/html", ".htm": "text/html", ".css": "text/css", ".xml": "application/xml",
  ".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript", ".jsx": "text/javascript",
  ".ts": "text/typescript", ".tsx": "text/typescript", ".json": "application/json", ".jsonl": "application/jsonl",
  ".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
  ".py": "text/x-python", ".rb": "text/x-ruby", ".go": "text/x-go", ".rs": "text/x-rust",
  ".java": "text/x-java", ".c": "text/x-c", ".h": "text/x-c", ".cpp": "text/x-c++", ".sh": "application/x-sh",
  ".sql": "application/sql", ".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".ico": "image/x-icon", ".bmp": "image/bmp",
  ".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
  ".tar": "application/x-tar", ".bz2": "application/x-bzip2", ".xz": "application/x-xz",
  ".wasm": "application/wasm", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".mp4": "video/mp4",
  ".webm": "video/webm", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
};

/** MIME type of a file, from its extension and (when that says nothing) from its content. */
export function mimeTypeOf(filePath: string, isBinary: boolean): string {
  const known = BY_EXTENSION[path.extname(filePath).toLowerCase()];
  if (known) return known;
  return isBinary ? "application/octet-stream" : "text/plain";
}

/** Adds `; charset=utf-8` to text types, for HTTP content-type headers. */
export function contentTypeOf(mimeType: string, isBinary: boolean): string {
  return isBinary || !/^(text\/|application\/(json|jsonl|xml|yaml|toml|sql|x-sh)|image\/svg)/.test(mimeType)
    ? mimeType
    : `${mimeType}; charset=utf-8`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Binary when the sample holds a NUL byte or is not valid UTF-8. `complete` says the sample is the
 * whole file; otherwise a multi-byte character cut at the sample's end is not held against it.
 */
export function looksBinary(sample: Uint8Array, complete: boolean): boolean {
  if (sample.includes(0)) return true;
  const checked = complete ? sample : sample.subarray(0, completeUtf8Length(sample));
  try {
    utf8.decode(checked);
    return false;
  } catch {
    return true;
  }
}

/** Length of the prefix that does not end inside a multi-byte UTF-8 sequence. */
function completeUtf8Length(bytes: Uint8Array): number {
  const end = bytes.length;
  for (let back = 1; back <= Math.min(3, end); back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? end - back : end;
  }
  return end;
}
