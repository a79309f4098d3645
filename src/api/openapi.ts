/**
 * The OpenAPI 3.1 document of /v1, generated from the same zod schemas the routes validate with
 * (request bodies from protocol/, queries and responses from ./schemas.ts). The paths are listed
 * here by hand; the shapes are not.
 */
import { z } from "zod";
import { execRequestSchema, startProcessRequestSchema, stdinRequestSchema } from "../../protocol/process.ts";
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import * as s from "./schemas.ts";

type Json = Record<string, unknown>;

const schema = (type: z.ZodType, io: "input" | "output" = "output"): Json => {
  const { $schema: _drop, ...json } = z.toJSONSchema(type, { io, unrepresentable: "any" }) as Json;
  return json;
};

const json = (type: z.ZodType, description: string): Json => ({
  description,
  content: { "application/json": { schema: schema(type) } },
});

const sse = (description: string, events: string): Json => ({
  description: `${description} Server-Sent Events: \`id: <seq>\`, \`event: <type>\`, \`data: <JSON event>\`; events: ${events}.`,
  content: { "text/event-stream": { schema: { type: "string" } } },
});

const errors: Json = {
  "4XX": { description: "Error with a wire code", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
  "5XX": { description: "Error with a wire code", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
};

const body = (type: z.ZodType): Json => ({ required: true, content: { "application/json": { schema: schema(type, "input") } } });

function queryParameters(type: z.ZodObject): Json[] {
  const json = schema(type, "input") as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    schema: property,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
  }));
}

const pid: Json = { name: "pid", in: "path", required: true, schema: { type: "string" }, description: "Process id" };

function op(summary: string, responses: Json, extra: Json = {}): Json {
  return { summary, ...extra, responses: { ...responses, ...errors } };
}

export function openApiDocument(serverUrl?: string): Json {
  const sandbox = "/v1/sandboxes/{id}";
  return {
    openapi: "3.1.0",
    info: {
      title: "Sandbox API",
      version: "1",
      description:
        "Run commands in per-sandbox containers. Every /v1/sandboxes route needs `Authorization: Bearer <SANDBOX_API_TOKEN>`. " +
        "A sandbox's container starts on first use and sleeps when idle.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Error: schema(s.errorResponseSchema) },
      parameters: {
        sandboxId: { name: "id", in: "path", required: true, schema: schema(sandboxIdSchema), description: "Sandbox id" },
      },
    },
    paths: {
      [sandbox]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        get: op("Sandbox state (starts its container if needed)", { 200: json(s.sandboxInfoSchema.extend({ id: z.string() }), "Sandbox") }),
        delete: op("Destroy the sandbox's container now (SIGKILL)", { 204: { description: "Destroyed" } }),
      },
      [`${sandbox}/config`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        patch: op("Change sandbox settings", { 204: { description: "Saved" } }, { requestBody: body(s.configRequestSchema) }),
      },
      [`${sandbox}/exec`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op("Run a command to completion", { 200: json(s.execResultSchema, "Result (success means exit code 0)") }, {
          requestBody: body(execRequestSchema),
        }),
      },
      [`${sandbox}/exec/stream`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op("Run a command, streaming its output", { 200: sse("Exec events.", "start, stdout, stderr, complete, error") }, {
          requestBody: body(execRequestSchema),
        }),
      },
      [`${sandbox}/processes`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op("Start a background process", { 201: json(s.processResponseSchema, "Started") }, { requestBody: body(startProcessRequestSchema) }),
        get: op("List processes", { 200: json(s.processListResponseSchema, "Processes") }, { parameters: queryParameters(s.listQuery) }),
        delete: op("Kill all processes", { 200: json(s.killAllResultSchema, "Killed") }, { parameters: queryParameters(s.killAllQuery) }),
      },
      [`${sandbox}/processes/cleanup`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op("Forget finished processes", { 200: json(s.cleanupResultSchema, "Cleaned") }),
      },
      [`${sandbox}/processes/{pid}`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, pid],
        get: op("A process", { 200: json(s.processResponseSchema, "Process") }, { parameters: queryParameters(s.generationQuery) }),
        delete: op("Signal a process", { 200: json(s.killResultSchema, "Signalled") }, { parameters: queryParameters(s.killQuery) }),
      },
      [`${sandbox}/processes/{pid}/logs`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, pid],
        get: op("Output so far", { 200: json(s.processLogsSchema, "Logs") }, { parameters: queryParameters(s.generationQuery) }),
      },
      [`${sandbox}/processes/{pid}/logs/stream`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, pid],
        get: op(
          "Follow a process's output; resumable with Last-Event-ID or ?since=",
          { 200: sse("Log events, ending after the final status.", "stdout, stderr, status, truncated, error") },
          {
            parameters: [
              ...queryParameters(s.logStreamQuery),
              { name: "Last-Event-ID", in: "header", required: false, schema: { type: "string" }, description: "Resume after this event id" },
            ],
          },
        ),
      },
      [`${sandbox}/processes/{pid}/stdin`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, pid],
        post: op("Write to (or close) a process's stdin", { 200: json(s.stdinResultSchema, "Written") }, {
          requestBody: body(stdinRequestSchema),
          parameters: queryParameters(s.generationQuery),
        }),
      },
    },
  };
}
