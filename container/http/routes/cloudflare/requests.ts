/**
 * Reading a request of Cloudflare's container API: its JSON body is first reshaped into our request
 * (`reshape`), then validated by our own schema, so the limits and checks stay the ones our routes
 * apply. Fields of theirs we have no use for (`sessionId` on file calls, `origin`) are dropped.
 */
import { z } from "zod";
import { readJson } from "../../request.ts";
import type { RequestContext } from "../../types.ts";

type Body = Record<string, unknown>;

const isBody = (value: unknown): value is Body => typeof value === "object" && value !== null && !Array.isArray(value);

export function readTheirJson<S extends z.ZodType>(ctx: RequestContext, ours: S, reshape: (body: Body) => Body = (body) => body): Promise<z.output<S>> {
  return readJson(ctx, z.preprocess((value) => (isBody(value) ? reshape(value) : value), ours));
}
