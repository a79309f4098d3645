/**
 * How one SandboxRpc method is offered over HTTP (/v1/sandboxes/:id…), declared once: the verb and
 * path, where each argument goes in the request, the schemas of the request and of the answer, its
 * status, and the answer's key. The /v1 routes, the OpenAPI document and the HTTP client's transport
 * are derived from these declarations (src/api/routes/derived.ts, src/api/openapi-operations.ts,
 * src/client/http-calls.ts); docs/architecture.md has the checklist for a new method.
 */
import type { z } from "zod";

export type Verb = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * Where one positional argument goes: a path parameter, a field of the JSON body or of the query,
 * the rest of the body or of the query (an options object spread into it), or a stream's resume
 * point (Last-Event-ID and the offsets in the query).
 */
export type ArgPlace = { path: string } | { body: string } | { query: string } | "body" | "query" | "resume";

/** What the answer is: JSON (the default), Server-Sent Events, or nothing (204). */
export type Answer = "json" | "sse" | "empty";

export interface Binding {
  verb: Verb;
  /** Under /v1/sandboxes/:id, `:name` for path parameters; "/" is the sandbox itself. */
  path: string;
  args: readonly ArgPlace[];
  /** The JSON body's schema (validated by the route, documented as the request body). */
  body?: z.ZodType;
  /** The query's schema (validated by the route, documented as query parameters). */
  query?: z.ZodObject;
  answer?: Answer;
  /** The JSON answer's schema (documented; the drift test checks real answers against it). */
  response?: z.ZodType;
  /** Default 200 (204 for an empty answer). */
  status?: 200 | 201 | 204;
  /** The method's result is this field of the answer (`{ process: … }`), not the whole answer. */
  key?: string;
  /** OpenAPI: what the operation does (prose, kept here beside the declaration). */
  summary: string;
  /** OpenAPI: the answer's description. */
  described?: string;
  /** OpenAPI, for an SSE answer: the events it carries. */
  events?: string;
  /**
   * Where the derivation stops: "route" — the /v1 route is written by hand (streams that need a grant,
   * uploads, WebSockets, calls that need the request itself); "client" — so is the client's call;
   * "openapi" — so is the operation (raw bytes), or the method shares another's route.
   */
  byHand?: readonly ("route" | "client" | "openapi")[];
  /** Other answers the route may give (e.g. 202 for a started command). */
  alsoAnswers?: readonly { status: number; response: z.ZodType; described: string }[];
  /** A stream a signed stream URL also opens (no Authorization header). */
  signed?: true;
  /** OpenAPI fields merged into the derived operation. */
  openapi?: Record<string, unknown>;
}

/** The status a binding answers with. */
export const statusOf = (binding: Binding): number => binding.status ?? (binding.answer === "empty" ? 204 : 200);

/** Path parameter names of a binding, in order (`/processes/:pid/logs` → ["pid"]). */
export const pathParams = (path: string): string[] => [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!);

/** Names of the body and query fields an argument takes by name (so the spread argument gets the rest). */
export function namedFields(binding: Binding, where: "body" | "query"): string[] {
  return binding.args.flatMap((place) => (typeof place === "object" && where in place ? [(place as Record<string, string>)[where]!] : []));
}
