/**
 * The pieces the OpenAPI document of /v1 is made of: JSON Schema from zod, JSON and SSE answers, the
 * error answers every operation has, query and path parameters. Shared by the operations derived
 * from the method bindings (./openapi-operations.ts) and those written by hand (./openapi.ts).
 */
import { z } from "zod";
import { streamUrlRequestSchema, streamUrlSchema } from "../../protocol/stream-url.ts";

export type Json = Record<string, unknown>;

export const schema = (type: z.ZodType, io: "input" | "output" = "output"): Json => {
  const { $schema: _drop, ...json } = z.toJSONSchema(type, { io, unrepresentable: "any" }) as Json;
  return json;
};

export const json = (type: z.ZodType, description: string): Json => ({
  description,
  content: { "application/json": { schema: schema(type) } },
});

export const sse = (description: string, events: string): Json => ({
  description: `${description} Server-Sent Events: \`id: <seq>\`, \`event: <type>\`, \`data: <JSON event>\`; events: ${events}.`,
  content: { "text/event-stream": { schema: { type: "string" } } },
});

export const errors: Json = {
  "4XX": { description: "Error with a wire code", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
  "5XX": { description: "Error with a wire code", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
};

export const body = (type: z.ZodType): Json => ({ required: true, content: { "application/json": { schema: schema(type, "input") } } });

/** A stream route also opened by a signed URL (no Authorization header: the URL's `expires` and `signature` grant it). */
export const signedStream: Json = { security: [{ bearer: [] }, { streamUrl: [] }] };

/** A route that mints a signed URL for one stream. */
export function mintOp(tag: string, summary: string, request: z.ZodType = streamUrlRequestSchema): Json {
  return op(summary, { 200: json(streamUrlSchema, "The signed URL and when it expires") }, { tags: [tag], requestBody: { ...body(request), required: false } });
}

export function queryParameters(type: z.ZodObject): Json[] {
  const json = schema(type, "input") as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    schema: property,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
  }));
}

export const pid: Json = { name: "pid", in: "path", required: true, schema: { type: "string" }, description: "Process id" };
export const sid: Json = { name: "sid", in: "path", required: true, schema: { type: "string" }, description: "Session id" };
export const cid: Json = { name: "cid", in: "path", required: true, schema: { type: "string" }, description: "Code context id" };
export const tid: Json = { name: "tid", in: "path", required: true, schema: { type: "string" }, description: "Terminal id" };
export const portParam: Json = { name: "port", in: "path", required: true, schema: { type: "integer", minimum: 1024, maximum: 65535 }, description: "Port inside the sandbox" };
export const eid: Json = { name: "eid", in: "path", required: true, schema: { type: "string" }, description: "Run id (the executionId of its start event)" };
export const bid: Json = { name: "bid", in: "path", required: true, schema: { type: "string", format: "uuid" }, description: "Backup id" };
export const bytes = (description: string): Json => ({ description, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } });

export function op(summary: string, responses: Json, extra: Json = {}): Json {
  return { summary, ...extra, responses: { ...responses, ...errors } };
}

/** A JSON file operation: POST with its protocol body. */
export function fileOp(summary: string, request: z.ZodType, response: z.ZodType): Json {
  return {
    parameters: [{ $ref: "#/components/parameters/sandboxId" }],
    post: op(summary, { 200: json(response, "Done") }, { requestBody: body(request) }),
  };
}

const secretName: Json = { name: "name", in: "path", required: true, schema: { type: "string" }, description: "Secret name" };

/** Path parameters by name, for operations derived from a binding's path. */
export const PATH_PARAMETERS: Record<string, Json> = { pid, sid, cid, tid, eid, bid, port: portParam, name: secretName };

/** `Last-Event-ID`, where a resumed stream starts. */
export const lastEventIdHeader: Json = { name: "Last-Event-ID", in: "header", required: false, schema: { type: "string" }, description: "Resume after this event id (wins over ?since=)" };
