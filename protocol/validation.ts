/**
 * How a value that fails its schema is reported, on every side (container server, local runtime,
 * Durable Object, Worker API): one message naming the first problem, and every issue as
 * `{path, message}` for the error's `context`.
 */
import type { z } from "zod";

export interface ValidationIssue {
  /** Dotted path into the value ("" for the value itself). */
  path: string;
  message: string;
}

export interface ValidationFailure {
  /** `Invalid <what>: <path>: <message>` for the first issue. */
  message: string;
  issues: ValidationIssue[];
}

export function describeValidationError(error: z.ZodError, what: string): ValidationFailure {
  const issues = error.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
  const first = issues[0];
  return { message: `Invalid ${what}: ${first ? `${first.path || "(value)"}: ${first.message}` : "malformed"}`, issues };
}

/**
 * A string that ends up in a system call (a command, an argument, an env value, a path), which
 * cannot carry a NUL byte: refused as a bad request at once, never a failed spawn later.
 */
export function withoutNul(schema: z.ZodString, what: string): z.ZodString {
  return schema.refine((value) => !value.includes("\0"), `${what} cannot contain NUL bytes`);
}
