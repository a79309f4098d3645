/** Validates RPC arguments with the protocol schemas (RPC callers are not type-checked at runtime). */
import type { z } from "zod";
import { resumePointSchema, resumeQueryParams, type ResumePoint } from "../../protocol/resume.ts";
import { describeValidationError } from "../../protocol/validation.ts";
import { InvalidRequestError } from "../rpc/errors.ts";

export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { message, issues } = describeValidationError(result.error, what);
  throw new InvalidRequestError(message, "INVALID_REQUEST", { context: { issues } });
}

/** A process id checked before it goes into a container route's path (RPC callers are not type-checked). */
export function processId(id: string): string {
  if (typeof id !== "string" || id.length === 0) {
    throw new InvalidRequestError("A process id is required", "INVALID_REQUEST");
  }
  return id;
}

/** The query of a resumed stream (`since`, byte offsets), checked first (RPC callers are not type-checked). */
export function resumeQuery(request: ResumePoint): string {
  const { since, stdoutOffset, stderrOffset } = request;
  return query(resumeQueryParams(parseRequest(resumePointSchema, { since, stdoutOffset, stderrOffset }, "resume point")));
}

export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}
