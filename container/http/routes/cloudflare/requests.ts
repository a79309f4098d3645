/**
 * Reading a request of Cloudflare's container API: its JSON body is first reshaped into our request
 * (`reshape`), then validated by our own schema, so the limits and checks stay the ones our routes
 * apply. Fields of theirs we have no use for (`sessionId` on file calls, `origin`) are dropped here,
 * by name: our schemas refuse any other field they do not know.
 *
 * Their client also sends `origin` on the calls that share our own routes (`/api/execute`, its
 * stream, `/api/process/start`): it tells their logs whether a user or the SDK itself ran the
 * command (their `setEnvVars` runs `export …` as `internal`). We log nothing by it, so it is checked
 * and dropped (`acceptingTheirOrigin`).
 */
import * as z from "zod";
import { readJson } from "../../request.ts";
import type { RequestContext } from "../../types.ts";
import { lazySchema } from "../../../../protocol/lazy-schema.ts";

type Body = Record<string, unknown>;

const isBody = (value: unknown): value is Body => typeof value === "object" && value !== null && !Array.isArray(value);

/** What their client sends along on calls whose request of ours has no such field. */
const THEIR_UNUSED_FIELDS = ["sessionId", "origin"] as const;

/** The body without their unused fields that `ours` does not know. */
function withoutUnused(body: Body, ours: z.ZodType): Body {
  const shape = (ours as { shape?: Record<string, unknown> }).shape;
  const kept = { ...body };
  for (const field of THEIR_UNUSED_FIELDS) if (!(shape !== undefined && field in shape)) delete kept[field];
  return kept;
}

/** The values their client gives `origin`. */
const theirOriginSchema = lazySchema(() => z.enum(["user", "internal"]));

/** `ours`, also taking their `origin` (one of its values, else a 400 naming it), which it drops. */
export function acceptingTheirOrigin<S extends z.ZodType>(ours: S) {
  return z.preprocess((value, ctx) => {
    if (!isBody(value) || !("origin" in value)) return value;
    const { origin, ...rest } = value;
    const checked = theirOriginSchema.safeParse(origin);
    if (!checked.success) ctx.addIssue({ code: "custom", path: ["origin"], message: 'origin is "user" or "internal"', input: origin });
    return rest;
  }, ours);
}

export function readTheirJson<S extends z.ZodType>(ctx: RequestContext, ours: S, reshape: (body: Body) => Body = (body) => body): Promise<z.output<S>> {
  return readJson(ctx, z.preprocess((value) => (isBody(value) ? withoutUnused(reshape(value), ours) : value), ours));
}
