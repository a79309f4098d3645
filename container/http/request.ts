/**
 * Reading request input in a route: the JSON body under this server's body limit, validated against
 * a protocol schema (the server kit reads and checks it); where a resumed stream picks up.
 */
import type { z } from "zod";
import { lastEventIdSchema, resumePointOf, resumeQuerySchema, type ResumePoint } from "../../protocol/resume.ts";
import { describeValidationError } from "../../protocol/validation.ts";
import { readJsonBody } from "../../server-kit/http/body.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { RequestContext } from "./types.ts";

/** The JSON body, validated; INVALID_JSON / INVALID_REQUEST (with the issues) otherwise. */
export function readJson<S extends z.ZodType>(ctx: RequestContext, schema: S): Promise<z.output<S>> {
  return readJsonBody(ctx.req, schema, { maxBytes: ctx.server.limits.maxRequestBodyBytes });
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
