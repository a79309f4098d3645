/**
 * A file's raw bytes through the Bridge API: `GET /v1/sandbox/:id/file/<path>` streams it out,
 * `PUT` streams the request body into it (missing parent directories are created) → `{ok: true}`.
 * The path after `/file/` is absolute without its leading slash (`workspace/main.py`), anywhere in
 * the sandbox (the Bridge keeps it inside `/workspace`; our file API serves the whole sandbox). Both
 * are our streamed file calls, so a file of any size passes through in chunks.
 */
import { Hono, type Context } from "hono";
import type { ApiEnv } from "../types.ts";
import { withWholeBody } from "../upload-relay.ts";
import { sandboxFilePath } from "./paths.ts";
import { sessionHeader, SESSION_HEADER } from "./sessions.ts";

const emptyBody = () => new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });

/** The file a `/file/<path>` route names, as our file calls take it. */
function filePath(c: Context<ApiEnv>): string {
  const marker = "/file/";
  const raw = new URL(c.req.url).pathname;
  return sandboxFilePath(`/${decodeURIComponent(raw.slice(raw.indexOf(marker) + marker.length))}`);
}

export const bridgeFileRoutes = new Hono<ApiEnv>()
  .get("/file/*", async (c) => {
    // Files are the sandbox's, whatever the session: the header is only checked.
    sessionHeader(c.req.header(SESSION_HEADER));
    const file = await c.var.sandbox.readFileStream(filePath(c));
    return new Response(file.stream, { headers: { "content-type": "application/octet-stream", "content-length": String(file.size) } });
  })
  .put("/file/*", async (c) => {
    sessionHeader(c.req.header(SESSION_HEADER));
    await withWholeBody(c.req.raw.body ?? emptyBody(), (body) => c.var.sandbox.writeFileStream(filePath(c), body));
    return c.json({ ok: true });
  });
