/**
 * Reading request input in a route: the JSON body under this server's body limit, validated against
 * a protocol schema (the server kit reads and checks it); query parameters.
 */
import type { z } from "zod";
import { readJsonBody } from "../../server-kit/http/body.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { RequestContext } from "./types.ts";

/** The JSON body, validated; INVALID_JSON / INVALID_REQUEST (with the issues) otherwise. */
export function readJson<S extends z.ZodType>(ctx: RequestContext, schema: S): Promise<z.output<S>> {
  return readJsonBody(ctx.req, schema, { maxBytes: ctx.server.limits.maxRequestBodyBytes });
}

/** A non-negative integer query parameter or header value (e.g. `since`), undefined when absent. */
export function parseSeq(value: string | null | undefined, name: string): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  if (!/^\d{1,15}$/.test(value.trim())) {
    throw new ServiceError("INVALID_REQUEST", `${name} must be a non-negative integer`, { [name]: value });
  }
  return Number(value.trim());
}
