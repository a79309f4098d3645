/**
 * `POST /api/read/stream {path}`: a file as Server-Sent Events the way Cloudflare's Sandbox SDK reads
 * it (`streamFile`, `collectFile`): a `metadata` event, `chunk` events, then `complete` with the byte
 * count. Text goes out as UTF-8 text that never splits a character, binary as base64 of whole 3-byte
 * groups (their client decodes every chunk on its own). The file is our streamed download
 * (files/read.ts), read at the client's pace; a file that cannot be opened is a JSON error before the
 * stream starts, so their client throws its typed error (FileNotFoundError, …).
 */
import type { ServerResponse } from "node:http";
import { existsRequestSchema } from "../../../../protocol/files.ts";
import { formatSseEvent, SSE_HEADERS } from "../../../../protocol/sse.ts";
import { Utf8ChunkDecoder } from "../../../../protocol/utf8.ts";
import { openFileDownload } from "../../../files/read.ts";
import type { RequestContext, Route } from "../../types.ts";
import { cloudflareRoute } from "./errors.ts";
import { readTheirJson } from "./requests.ts";
import { CLOUDFLARE_ROUTES } from "../../../../protocol/cloudflare-routes.ts";

/** Turns file bytes into chunk texts: whole characters, or base64 of whole 3-byte groups. */
interface ChunkEncoder {
  push(bytes: Buffer): string;
  end(): string;
}

function textChunks(): ChunkEncoder {
  const decoder = new Utf8ChunkDecoder();
  return { push: (bytes) => decoder.decode(bytes), end: () => decoder.end() };
}

function base64Chunks(): ChunkEncoder {
  let carry: Buffer = Buffer.alloc(0);
  return {
    push(bytes) {
      const all = carry.length === 0 ? bytes : Buffer.concat([carry, bytes]);
      const whole = all.length - (all.length % 3);
      carry = all.subarray(whole);
      return all.subarray(0, whole).toString("base64");
    },
    end: () => carry.toString("base64"),
  };
}

/** Writes one event; waits while the socket is full (or until it closes), so a slow reader holds the file read back. */
async function send(res: ServerResponse, event: { type: string } & Record<string, unknown>): Promise<void> {
  if (res.destroyed || res.write(formatSseEvent(event))) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}

async function readStream(ctx: RequestContext): Promise<void> {
  const { path } = await readTheirJson(ctx, existsRequestSchema);
  const download = await openFileDownload(ctx.server.services.paths, path);
  const { res } = ctx;
  // A reader that goes away stops the read (and closes the file).
  res.once("close", () => download.stream.destroy());
  res.writeHead(200, SSE_HEADERS);
  const encoding = download.isBinary ? "base64" : "utf-8";
  const chunks = download.isBinary ? base64Chunks() : textChunks();
  let bytesRead = 0;
  try {
    await send(res, { type: "metadata", mimeType: download.mimeType, size: download.size, isBinary: download.isBinary, encoding });
    for await (const bytes of download.stream as AsyncIterable<Buffer>) {
      bytesRead += bytes.length;
      const data = chunks.push(bytes);
      if (data !== "") await send(res, { type: "chunk", data });
    }
    const rest = chunks.end();
    if (rest !== "") await send(res, { type: "chunk", data: rest });
    await send(res, { type: "complete", bytesRead });
  } catch (error) {
    if (res.destroyed) return;
    await send(res, { type: "error", error: (error as Error).message });
  }
  res.end();
}

export const cloudflareReadStreamRoutes: Route[] = [cloudflareRoute("POST", CLOUDFLARE_ROUTES.readStream, readStream)];
