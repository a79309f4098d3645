/**
 * The /v1 routes of every method whose binding (src/rpc/bindings/) leaves its route to derivation:
 * validate the body and query with the declared schemas, take the arguments from where the binding
 * puts them, call the sandbox, answer with the declared status (and key). Routes that need more
 * (grants, uploads, WebSockets, the request's own origin) are written by hand beside this file.
 */
import type { Context, MiddlewareHandler } from "hono";
import { Hono } from "hono";
import { type Binding, namedFields, statusOf } from "../../rpc/bindings/binding.ts";
import { API_METHODS, type ApiMethod } from "../../rpc/bindings/index.ts";
import { resumeRequest, sseResponse } from "../sse.ts";
import type { ApiEnv } from "../types.ts";
import { jsonBody, queryParams } from "../validate.ts";

type AnyMethod = (...args: unknown[]) => Promise<unknown>;
type Fields = Record<string, unknown>;

/** The arguments of the call, in order, from where the binding says each one is. */
function argumentsOf(c: Context<ApiEnv>, binding: Binding, body: Fields, query: Fields): unknown[] {
  const without = (fields: Fields, names: string[]) => Object.fromEntries(Object.entries(fields).filter(([name]) => !names.includes(name)));
  return binding.args.map((place) => {
    if (place === "body") return without(body, namedFields(binding, "body"));
    if (place === "query") return without(query, namedFields(binding, "query"));
    if (place === "resume") return resumeRequest(c.req.header("last-event-id"), query);
    if ("path" in place) return c.req.param(place.path);
    if ("body" in place) return body[place.body];
    return query[place.query];
  });
}

function derivedRoute(name: ApiMethod, binding: Binding): MiddlewareHandler<ApiEnv>[] {
  const validators: MiddlewareHandler<ApiEnv>[] = [];
  if (binding.query) validators.push(queryParams(binding.query) as unknown as MiddlewareHandler<ApiEnv>);
  if (binding.body) validators.push(jsonBody(binding.body) as unknown as MiddlewareHandler<ApiEnv>);
  const handler: MiddlewareHandler<ApiEnv> = async (c) => {
    const valid = (target: "json" | "query") => (c.req.valid as (target: string) => Fields).call(c.req, target);
    const args = argumentsOf(c, binding, binding.body ? valid("json") : {}, binding.query ? valid("query") : {});
    const result = await (c.var.sandbox[name] as AnyMethod)(...args);
    if (binding.answer === "sse") return sseResponse(result as ReadableStream<Uint8Array>);
    const status = statusOf(binding);
    if (status === 204) return c.body(null, 204);
    return c.json((binding.key ? { [binding.key]: result } : result) as object, status as 200 | 201);
  };
  return [...validators, handler];
}

export const derivedRoutes = new Hono<ApiEnv>();
for (const [name, binding] of Object.entries(API_METHODS) as [ApiMethod, Binding][]) {
  if (binding.byHand?.includes("route")) continue;
  derivedRoutes.on(binding.verb, [binding.path], ...derivedRoute(name, binding));
}
