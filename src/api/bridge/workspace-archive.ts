/**
 * The Bridge's workspace archives on top of ours: `persist` (POST, or GET) streams /workspace out as
 * a plain tar, leaving out the comma-separated `excludes`; `hydrate` (POST) extracts a tar body into
 * /workspace → `{ok: true}`. Both stream: unlike the Bridge's, no archive is held whole, so hydrate
 * has no 32 MiB cap. Extraction refuses entries that would land outside the workspace.
 */
import { Hono, type Context } from "hono";
import { archivePathSchema, TAR_MEDIA_TYPE } from "../../../protocol/archive.ts";
import { InvalidRequestError } from "../../rpc/errors.ts";
import type { ApiEnv } from "../types.ts";
import { withWholeBody } from "../upload-relay.ts";

/** `?excludes=__pycache__,.venv` as workspace paths; `..` and absolute paths are refused as the Bridge does. */
function excludes(c: Context<ApiEnv>): string[] {
  const list = (c.req.query("excludes") ?? "").split(",").filter((part) => part.length > 0);
  for (const path of list) {
    if (!archivePathSchema.safeParse(path).success) throw new InvalidRequestError(`exclude paths must not contain ".." or start with "/": ${path}`, "INVALID_REQUEST");
  }
  return list.map((path) => path.replace(/^\.\//, ""));
}

async function persist(c: Context<ApiEnv>): Promise<Response> {
  const exclude = excludes(c);
  const stream = await c.var.sandbox.exportArchive({ format: "tar", ...(exclude.length > 0 ? { exclude } : {}) });
  return new Response(stream, { headers: { "content-type": "application/octet-stream", "x-archive-type": TAR_MEDIA_TYPE } });
}

export const bridgeArchiveRoutes = new Hono<ApiEnv>()
  .on(["GET", "POST"], "/persist", persist)
  .post("/hydrate", async (c) => {
    const declared = c.req.header("content-length");
    if (!c.req.raw.body || declared === "0") throw new InvalidRequestError("Empty tar payload", "INVALID_REQUEST");
    await withWholeBody(c.req.raw.body, (body) => c.var.sandbox.importArchive(body));
    return c.json({ ok: true });
  });
