/** Archives made by hand for the archive tests: raw tar headers, so an entry can say anything a hostile archive would. */
import { gzipSync } from "node:zlib";
import { Header } from "tar";

export interface RawEntry {
  path: string;
  type: "File" | "Directory" | "SymbolicLink" | "Link";
  body?: string;
  linkpath?: string;
  mode?: number;
}

/** A gzip'd tar of exactly these entries, in this order. */
export function rawArchive(entries: RawEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? "");
    const header = new Header({
      path: entry.path,
      type: entry.type,
      size: entry.type === "File" ? body.length : 0,
      mode: entry.mode ?? (entry.type === "Directory" ? 0o755 : 0o644),
      mtime: new Date(),
      ...(entry.linkpath === undefined ? {} : { linkpath: entry.linkpath }),
    });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block);
    if (entry.type === "File" && body.length > 0) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
