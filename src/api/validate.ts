/**
 * Request validation with the protocol's zod schemas, as Hono validators (so handlers read typed
 * `c.req.valid(...)`). JSON bodies are parsed whatever their content type says — `curl -d` sends
 * form encoding by default — and an empty body counts as `{}`. A body nested deeper than
 * LIMITS.maxJsonDepth is refused before it is parsed.
 */
import type { Context } from "hono";
import { validator } from "hono/validator";
import type { z } from "zod";
import { nestsDeeperThan } from "../../protocol/json-depth.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { describeValidationError } from "../../protocol/validation.ts";
import { errorResponse } from "./errors.ts";

const JSON_MEDIA = /^application\/([\w.-]+\+)?json$/i;

function invalid(c: Context, what: string, error: z.ZodError): Response {
  const { message, issues } = describeValidationError(error, what);
  return errorResponse(c, "INVALID_REQUEST", message, { issues });
}

export function jsonBody<S extends z.ZodType>(schema: S) {
  const validate = validator("json", async (value, c): Promise<z.output<S> | Response> => {
    let input: unknown = value;
    const mediaType = (c.req.header("content-type") ?? "").split(";")[0]!.trim();
    if (!JSON_MEDIA.test(mediaType)) {
      if (mediaType === "multipart/form-data") return errorResponse(c, "UNSUPPORTED_MEDIA_TYPE", "Send JSON bodies");
      const text = await c.req.text();
      if (text.trim() === "") input = {};
      else {
        try {
          input = JSON.parse(text);
        } catch {
          return errorResponse(c, "INVALID_JSON", "Request body is not valid JSON");
        }
      }
    }
    const result = schema.safeParse(input);
    return result.success ? (result.data as z.output<S>) : invalid(c, "request body", result.error);
  });
  // The text is read (and kept for the validator) and its nesting checked before anything parses it.
  return (async (c, next) => {
    if (nestsDeeperThan(await c.req.text(), LIMITS.maxJsonDepth)) {
      return errorResponse(c, "INVALID_JSON", `Request body nests deeper than ${LIMITS.maxJsonDepth} levels`, { maxDepth: LIMITS.maxJsonDepth });
    }
    return validate(c, next);
  }) as typeof validate;
}

export function queryParams<S extends z.ZodType>(schema: S) {
  return validator("query", (value, c): z.output<S> | Response => {
    const result = schema.safeParse(value);
    return result.success ? (result.data as z.output<S>) : invalid(c, "query", result.error);
  });
}
