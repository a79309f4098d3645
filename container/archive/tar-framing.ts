/**
 * The tar stream checked before the tar parser sees a byte of it. A gzip'd body unfolds up to a
 * thousand times over, and node-tar parses what follows an archive's end (or a run of empty blocks)
 * block by block, buffering as it goes: a couple of MB of gzip'd zeros kept a parser busy for
 * minutes. So the decompressed bytes go through this first: it follows the archive's framing
 * (512-byte headers, each entry's data rounded up to a block, the size a pax header gives the next
 * entry), passes the archive up to its end marker (two empty blocks), and refuses
 *   - more than `maxBytes` of decompressed stream in all (PAYLOAD_TOO_LARGE), and
 *   - more than `maxTrailingBytes` after the end marker (INVALID_ARCHIVE): writers pad an archive to
 *     a record (10 KiB by default, a few MiB with a large blocking factor), nothing more; what lies
 *     within that is dropped, never parsed.
 * A header it cannot read is passed on as it is: the parser refuses it (INVALID_ARCHIVE). Tar bytes
 * that begin as a compressed stream would (gzip's or zstd's magic bytes) are refused: node-tar would
 * decompress them itself, a second time, past every check here.
 */
import { ServiceError } from "../../server-kit/service-error.ts";

const BLOCK = 512;

export interface FramingLimits {
  /** Decompressed bytes at most, end marker and padding included. */
  maxBytes: number;
  /** Bytes after the end marker at most. */
  maxTrailingBytes: number;
}

/** The entry's data size from a header block: octal text, or base-256 when the first byte's top bit is set. */
function declaredSize(header: Buffer): number {
  const field = header.subarray(124, 136);
  if ((field[0]! & 0x80) !== 0) {
    let size = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i++) size = size * 256 + field[i]!;
    return size;
  }
  const text = field.toString("latin1").replace(/[\0 ]+$/g, "").trim();
  const size = text === "" ? 0 : Number.parseInt(text, 8);
  return Number.isFinite(size) && size >= 0 ? size : 0;
}

function isEmptyBlock(block: Buffer): boolean {
  for (let i = 0; i < BLOCK; i++) if (block[i] !== 0) return false;
  return true;
}

/** The `size` record of a pax extended header, which overrides the next entry's header. */
function paxSize(data: Buffer): number | undefined {
  const found = /(?:^|\n)\d+ size=(\d+)\n/.exec(data.toString("latin1"));
  return found ? Number(found[1]) : undefined;
}

/** Pax and long-name data is read whole; node-tar refuses more than this per entry too. */
const MAX_META_BYTES = 1024 * 1024;
const META_TYPES = new Set(["x", "g", "L", "K"]);
/** gzip's and zstd's magic bytes, which node-tar sniffs for at the start of what it is given. */
const COMPRESSED_MAGIC = [Buffer.from([0x1f, 0x8b]), Buffer.from([0x28, 0xb5, 0x2f, 0xfd])];

export class TarFraming {
  readonly #limits: FramingLimits;
  /** Decompressed bytes seen. */
  #total = 0;
  /** Bytes of the current header block gathered so far, when one is split across chunks. */
  #header = Buffer.alloc(0);
  /** Data (and padding) bytes of the current entry still to pass. */
  #dataLeft = 0;
  /** A meta entry's data, gathered to read its size record. */
  #meta: Buffer[] | undefined;
  #metaLeft = 0;
  #nextSize: number | undefined;
  #emptyBlocks = 0;
  #first = true;
  #ended = false;
  #trailing = 0;

  constructor(limits: FramingLimits) {
    this.#limits = limits;
  }

  /** True once the end marker has passed: the parser needs nothing more. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The part of `chunk` the parser should see (nothing once the archive has ended); throws a refusal. */
  take(chunk: Buffer): Buffer[] {
    this.#total += chunk.length;
    if (this.#total > this.#limits.maxBytes) {
      throw new ServiceError("PAYLOAD_TOO_LARGE", `the archive unpacks to more than ${this.#limits.maxBytes} bytes`, { maxBytes: this.#limits.maxBytes });
    }
    const passed: Buffer[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.#ended) {
        this.#trailing += chunk.length - at;
        if (this.#trailing > this.#limits.maxTrailingBytes) {
          throw new ServiceError("INVALID_ARCHIVE", `the archive was refused: more than ${this.#limits.maxTrailingBytes} bytes follow its end`, {
            maxTrailingBytes: this.#limits.maxTrailingBytes,
          });
        }
        break;
      }
      if (this.#dataLeft > 0) {
        const n = Math.min(this.#dataLeft, chunk.length - at);
        const data = chunk.subarray(at, at + n);
        passed.push(data);
        if (this.#meta) this.#gatherMeta(data);
        this.#dataLeft -= n;
        at += n;
        continue;
      }
      const n = Math.min(BLOCK - this.#header.length, chunk.length - at);
      const part = chunk.subarray(at, at + n);
      this.#header = this.#header.length === 0 ? Buffer.from(part) : Buffer.concat([this.#header, part]);
      at += n;
      if (this.#header.length < BLOCK) continue;
      const header = this.#header;
      this.#header = Buffer.alloc(0);
      passed.push(header);
      this.#onHeader(header);
    }
    return passed;
  }

  #onHeader(header: Buffer): void {
    if (this.#first) {
      this.#first = false;
      if (COMPRESSED_MAGIC.some((magic) => header.subarray(0, magic.length).equals(magic))) {
        throw new ServiceError("INVALID_ARCHIVE", "the archive was refused: it is compressed twice, or with a compression other than gzip");
      }
    }
    if (isEmptyBlock(header)) {
      if (++this.#emptyBlocks === 2) this.#ended = true;
      return;
    }
    this.#emptyBlocks = 0;
    const type = String.fromCharCode(header[156]!);
    const size = this.#nextSize ?? declaredSize(header);
    this.#nextSize = undefined;
    this.#dataLeft = Math.ceil(size / BLOCK) * BLOCK;
    if (META_TYPES.has(type)) {
      if (size > MAX_META_BYTES) throw new ServiceError("INVALID_ARCHIVE", `the archive was refused: a header of ${size} bytes`, { maxBytes: MAX_META_BYTES });
      this.#meta = type === "x" && size > 0 ? [] : undefined;
      this.#metaLeft = size;
    }
  }

  #gatherMeta(data: Buffer): void {
    const part = data.subarray(0, Math.min(data.length, this.#metaLeft));
    this.#meta!.push(part);
    this.#metaLeft -= part.length;
    if (this.#metaLeft > 0) return;
    this.#nextSize = paxSize(Buffer.concat(this.#meta!));
    this.#meta = undefined;
  }
}
