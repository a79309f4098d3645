/** Archives made by hand for the archive tests: raw tar headers, so an entry can say anything a hostile archive would. */
import { constants, crc32, deflateRawSync, gzipSync } from "node:zlib";
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

/**
 * `bytes` of zeros (a multiple of 1 MiB) gzip'd as one member, as `head -c … /dev/zero | gzip -9`
 * makes it, in a fraction of its time: each MiB is deflated after a full flush, which makes every
 * one the same bytes, so one is made and repeated. About a thousand to one.
 */
export function gzippedZeros(bytes: number): Buffer {
  const MIB = 1024 * 1024;
  const deflate = (flush: number, input: Buffer) => deflateRawSync(input, { level: 9, finishFlush: flush });
  const block = deflate(constants.Z_FULL_FLUSH, Buffer.alloc(MIB));
  const end = deflate(constants.Z_FINISH, Buffer.alloc(0));
  let crc = 0;
  const zeros = Buffer.alloc(MIB);
  for (let done = 0; done < bytes; done += MIB) crc = crc32(zeros, crc);
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(bytes % 2 ** 32, 4);
  return Buffer.concat([header, ...Array.from({ length: bytes / MIB }, () => block), end, trailer]);
}
