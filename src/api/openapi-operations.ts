/**
 * The OpenAPI operations of every documented method binding (src/rpc/bindings/): path and query
 * parameters, the request body and the answer, from the binding's schemas. Prose comes from the
 * binding (`summary`, `described`, `events`); anything more from its `openapi` fields.
 */
import { z } from "zod";
import { type Binding, pathParams, statusOf } from "../rpc/bindings/binding.ts";
import { API_METHODS, type ApiMethod, tagOf } from "../rpc/bindings/index.ts";
import { body, json, lastEventIdHeader, op, PATH_PARAMETERS, queryParameters, signedStream, sse, type Json } from "./openapi-parts.ts";

/** `/processes/:pid` → `/v1/sandboxes/{id}/processes/{pid}`. */
export const documentedPath = (path: string): string => `/v1/sandboxes/{id}${path === "/" ? "" : path.replace(/:(\w+)/g, "{$1}")}`;

function answerOf(binding: Binding): Json {
  const status = statusOf(binding);
  if (binding.answer === "sse") return { [status]: sse(binding.described ?? "Events.", binding.events ?? "") };
  if (status === 204 || !binding.response) return { [status]: { description: binding.described ?? "Done" } };
  const shape = binding.key ? z.object({ [binding.key]: binding.response }) : binding.response;
  const also = Object.fromEntries((binding.alsoAnswers ?? []).map((answer) => [answer.status, json(answer.response, answer.described)]));
  return { [status]: json(shape, binding.described ?? "Done"), ...also };
}

function operationOf(name: ApiMethod, binding: Binding): Json {
  const parameters = [...(binding.query ? queryParameters(binding.query) : []), ...(binding.args.includes("resume") ? [lastEventIdHeader] : [])];
  const { responses: extraAnswers, ...extra } = (binding.openapi ?? {}) as { responses?: Json };
  const operation = op(binding.summary, { ...answerOf(binding), ...extraAnswers }, {
    tags: [tagOf(name)],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(binding.body ? { requestBody: body(binding.body) } : {}),
    ...(binding.signed ? signedStream : {}),
    ...extra,
  });
  return operation;
}

/** The path items of the documented bindings, to merge with the operations written by hand. */
export function derivedPathItems(): Record<string, Json> {
  const items: Record<string, Json> = {};
  for (const [name, binding] of Object.entries(API_METHODS) as [ApiMethod, Binding][]) {
    if (binding.byHand?.includes("openapi")) continue;
    const path = documentedPath(binding.path);
    items[path] ??= { parameters: [{ $ref: "#/components/parameters/sandboxId" }, ...pathParams(binding.path).map((name) => PATH_PARAMETERS[name])] };
    items[path]![binding.verb.toLowerCase()] = operationOf(name, binding);
  }
  return items;
}
