/**
 * The OpenAPI 3.1 document of /v1: the prose and components written here, the operations of the
 * method bindings (src/rpc/bindings/) derived by ./openapi-operations.ts, and here by hand only
 * those the bindings cannot describe (raw bytes, WebSockets, stream URLs, the preview proxy).
 * Every shape comes from a zod schema, never written out again.
 */
import { fileWrittenSchema, streamWriteQuerySchema } from "../../protocol/files.ts";
import { createArchiveRequestSchema, importArchiveResultSchema } from "../../protocol/archive.ts";
import { errorResponseSchema } from "../../protocol/errors.ts";
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import { terminalUrlRequestSchema } from "../../protocol/stream-url.ts";
import { terminalOutputQuerySchema } from "../../protocol/terminals.ts";
import { API_METHODS, API_TAGS, tagOf } from "../rpc/bindings/index.ts";
import * as s from "./schemas.ts";
import { derivedPathItems, documentedPath } from "./openapi-operations.ts";
import { body, bytes, json, mintOp, op, queryParameters, schema, signedStream, pid, portParam, tid, type Json } from "./openapi-parts.ts";

const rawBody: Json = { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } };

/** The operations written here, with those derived from the method bindings merged in. */
function withDerived(paths: Record<string, Json>): Record<string, Json> {
  for (const [path, item] of Object.entries(derivedPathItems())) paths[path] = { ...item, ...paths[path] };
  return paths;
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
        "A sandbox's container starts on first use and sleeps when idle. File paths are relative to the sandbox's workspace, " +
        "or absolute anywhere in the sandbox; what the sandbox may not touch, and its server's own process, is 403 PERMISSION_DENIED.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearer: [] }],
    tags: API_TAGS,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        streamUrl: {
          type: "apiKey",
          in: "query",
          name: "signature",
          description: "A signed stream URL (with its `expires`), minted by the stream-url/ws-url routes or exec with stream: \"url\"; good only for the stream it names, until it expires (401 STREAM_URL_INVALID / STREAM_URL_EXPIRED).",
        },
      },
      schemas: { Error: schema(errorResponseSchema) },
      parameters: {
        sandboxId: { name: "id", in: "path", required: true, schema: schema(sandboxIdSchema), description: "Sandbox id" },
      },
    },
    paths: withDerived({
      [documentedPath(API_METHODS.readFileStream.path)]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        get: op(API_METHODS.readFileStream.summary, { 200: bytes("The file") }, { tags: [tagOf("readFileStream")], parameters: queryParameters(s.fileQuery) }),
        put: op(API_METHODS.writeFileStream.summary, { 200: json(fileWrittenSchema, "Written") }, {
          tags: [tagOf("writeFileStream")],
          parameters: queryParameters(streamWriteQuerySchema),
          requestBody: rawBody,
        }),
      },
      [`${sandbox}/processes/{pid}/logs/stream-url`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, pid],
        post: mintOp(
          tagOf("streamProcessLogs"),
          "A signed URL of the process's log stream, for `new EventSource(url)` (no Authorization header; resumes with Last-Event-ID); it names this run of the process: a later process with the same id is 410 STREAM_URL_STALE",
        ),
      },
      [documentedPath(API_METHODS.connectTerminal.path)]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        get: op(API_METHODS.connectTerminal.summary, { 101: { description: "Switching to the WebSocket" } }, {
          tags: [tagOf("connectTerminal")],
          parameters: queryParameters(terminalOutputQuerySchema),
          ...signedStream,
        }),
      },
      [`${sandbox}/ports/{port}/{path}`]: {
        parameters: [
          { $ref: "#/components/parameters/sandboxId" },
          portParam,
          { name: "path", in: "path", required: true, schema: { type: "string" }, description: "Any path (and query), passed on to the port" },
        ],
        get: op(
          "The path-based preview URL of an exposed port, served only on the origin the operator set apart for it (SANDBOX_PREVIEW_PATH_ORIGIN, " +
            "which serves nothing else: 404 PREVIEW_ORIGIN_ONLY), never on this API's origin (404 NOT_FOUND). The usual form is host-based, " +
            "{port}-{id}.{SANDBOX_PREVIEW_DOMAIN} or {port}-{id}.localhost, with the path as it is. Any method, any path, WebSocket upgrades " +
            "too, proxied to the port inside the sandbox with the prefix stripped (sent as X-Forwarded-Prefix). A private port admits " +
            "`?token=<token>` (a browser's navigation is answered with 302 to the same URL without it and a cookie scoped to the port's path " +
            "or host), then that cookie, or the API token. The answer never carries Service-Worker-Allowed; a service worker script asking " +
            "for a scope outside the port is 403 SERVICE_WORKER_SCOPE_REFUSED. 401 PORT_TOKEN_REQUIRED, 403 PORT_TOKEN_INVALID, " +
            "404 PORT_NOT_EXPOSED (also after the sandbox is destroyed), 410 STALE_PREVIEW_URL (a good credential for a port exposed in an earlier " +
            "container: expose it again; never starts one), 502 PORT_NOT_LISTENING.",
          { 200: { description: "The port's own answer" }, 302: { description: "The token traded for a cookie" }, 101: { description: "A WebSocket to the port" } },
          { tags: [tagOf("exposePort")], security: [{}, { bearer: [] }] },
        ),
      },
      [`${sandbox}/terminals/{tid}/ws-url`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        post: mintOp(
          tagOf("connectTerminal"),
          'A signed ws:/wss: URL of the terminal\'s viewer socket, for `new WebSocket(url)` (no Authorization header; `&since=` may be added); `mode: "view"`: output only, input and resizes refused (TERMINAL_VIEW_ONLY)',
          terminalUrlRequestSchema,
        ),
      },
      [documentedPath(API_METHODS.exportArchive.path)]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op(API_METHODS.exportArchive.summary, { 200: bytes("The archive, streamed as it is made") }, { tags: [tagOf("exportArchive")], requestBody: body(createArchiveRequestSchema) }),
      },
      [documentedPath(API_METHODS.importArchive.path)]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        put: op(API_METHODS.importArchive.summary, { 200: json(importArchiveResultSchema, API_METHODS.importArchive.described) }, { tags: [tagOf("importArchive")], requestBody: rawBody }),
      },
    }),
  };
}
