/**
 * The HTTP client's calls derived from the method bindings (src/rpc/bindings/): each argument put
 * where its binding says (path, query, JSON body, Last-Event-ID), the answer read as the binding
 * declares it (JSON, its key, nothing, or an SSE stream). Calls that need more are written by hand
 * in ./http.ts.
 */
import { type Binding, namedFields } from "../rpc/bindings/binding.ts";
import { API_METHODS, type ApiMethod } from "../rpc/bindings/index.ts";
import type { StreamResumeRequest } from "../rpc/processes.ts";

export type Query = Record<string, string | number | boolean | undefined>;

export interface HttpRequestParts {
  query?: Query;
  /** JSON body. */
  body?: unknown;
  /** Resume after this event id (an SSE stream). */
  lastEventId?: string;
}

/** How the calls reach the Worker: a JSON answer, or an SSE stream. */
export interface HttpCaller {
  json(method: string, path: string, init: HttpRequestParts): Promise<unknown>;
  stream(method: string, path: string, init: HttpRequestParts): Promise<ReadableStream<Uint8Array>>;
}

type AnyMethod = (...args: unknown[]) => Promise<unknown>;
type Fields = Record<string, unknown>;

/** A binding's path with its parameters filled in, in order, each escaped. */
export function pathOf(binding: Binding, ...values: string[]): string {
  let i = 0;
  const path = binding.path.replace(/:\w+/g, () => encodeURIComponent(values[i++] ?? ""));
  return path === "/" ? "" : path;
}

/** The request for a call: the path filled in, the query, the body, the resume point. */
export function requestOf(binding: Binding, args: readonly unknown[]): { path: string } & HttpRequestParts {
  let path = binding.path === "/" ? "" : binding.path;
  const query: Fields = {};
  let body: Fields | undefined;
  let lastEventId: string | undefined;
  // The spread options go in first, so a field named by its own argument wins over one in them.
  binding.args.forEach((place, i) => {
    const value = args[i];
    if (place === "body") body = { ...body, ...(value as Fields | undefined) };
    else if (place === "query") Object.assign(query, value as Fields | undefined);
    else if (place === "resume") {
      const { generation, stdoutOffset, stderrOffset, since } = (value ?? {}) as StreamResumeRequest;
      Object.assign(query, { generation, stdoutOffset, stderrOffset });
      if (since !== undefined) lastEventId = String(since);
    }
  });
  binding.args.forEach((place, i) => {
    const value = args[i];
    if (typeof place !== "object") return;
    if ("path" in place) path = path.replace(`:${place.path}`, encodeURIComponent(String(value)));
    else if ("query" in place) query[place.query] = value;
    else if (value !== undefined) body = { ...body, [place.body]: value };
    else body ??= {};
  });
  if (namedFields(binding, "body").length > 0 || binding.args.includes("body")) body ??= {};
  return { path, query: query as Query, ...(body === undefined ? {} : { body }), ...(lastEventId === undefined ? {} : { lastEventId }) };
}

/** Every method whose client call is derived, as functions over `caller`. */
export function derivedCalls(caller: HttpCaller): Partial<Record<ApiMethod, AnyMethod>> {
  const calls: Partial<Record<ApiMethod, AnyMethod>> = {};
  for (const [name, binding] of Object.entries(API_METHODS) as [ApiMethod, Binding][]) {
    if (binding.byHand?.includes("client")) continue;
    calls[name] = async (...args: unknown[]) => {
      const { path, ...init } = requestOf(binding, args);
      if (binding.answer === "sse") return caller.stream(binding.verb, path, init);
      const answer = await caller.json(binding.verb, path, init);
      if (binding.answer === "empty") return undefined;
      return binding.key ? (answer as Fields)[binding.key] : answer;
    };
  }
  return calls;
}
