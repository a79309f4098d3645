/**
 * Reading request input in a route: the JSON body under this server's body limit, validated against
 * a protocol schema (the server kit reads and checks it), with one large string as bytes where the
 * route wants that; where a resumed stream picks up.
 */
import type { z } from "zod";
import { lastEventIdSchema, resumePointOf, resumeQuerySchema, type ResumePoint } from "../../protocol/resume.ts";
import { describeValidationError } from "../../protocol/validation.ts";
import { parseJsonBody, readBody, readJsonBody } from "../../server-kit/http/body.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { cutStringField } from "./json-string-field.ts";
import type { RequestContext } from "./types.ts";

/** The JSON body, validated; INVALID_JSON / INVALID_REQUEST (with the issues) otherwise. */
export function readJson<S extends z.ZodType>(ctx: RequestContext, schema: S): Promise<z.output<S>> {
  return readJsonBody(ctx.req, schema, { maxBytes: ctx.server.limits.maxRequestBodyBytes });
}

/**
 * The JSON body, validated, with the string value of `field` as its UTF-8 bytes where the body can
 * be cut without changing what it says (json-string-field.ts): `value[field]` is then "". Otherwise
 * as readJson, and `bytes` is undefined. Errors are those of the whole body.
 */
export async function readJsonWithBytes<S extends z.ZodType>(
  ctx: RequestContext,
  schema: S,
  field: string,
): Promise<{ value: z.output<S>; bytes?: Buffer }> {
  const body = await readBody(ctx.req, ctx.server.limits.maxRequestBodyBytes);
  const cut = cutStringField(body, field);
  const whole = () => ({ value: parseJsonBody(cut.value === undefined ? cut.text : body.toString("utf8"), schema, {}) });
  if (cut.value === undefined) return whole();
  let value: z.output<S>;
  try {
    value = parseJsonBody(cut.text, schema, {});
  } catch {
    return whole();
  }
  return (value as Record<string, unknown>)[field] === "" ? { value, bytes: cut.value } : whole();
}

/** Where a resumed stream picks up: `Last-Event-ID` (what EventSource sends) or `?since=`, and byte offsets per stream. */
export function readResumePoint(ctx: RequestContext): ResumePoint {
  const header = ctx.req.headers["last-event-id"];
  const lastEventId = valid(lastEventIdSchema, (Array.isArray(header) ? header[0] : header) ?? "", "Last-Event-ID");
  return resumePointOf(lastEventId, valid(resumeQuerySchema, Object.fromEntries(ctx.url.searchParams), "query"));
}

function valid<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { message, issues } = describeValidationError(result.error, what);
  throw new ServiceError("INVALID_REQUEST", message, { issues });
}
