/**
 * The OpenAPI 3.1 document of /v1: the prose and components written here, the operations of the
 * method bindings (src/rpc/bindings/) derived by ./openapi-operations.ts, and here by hand only
 * those the bindings cannot describe (raw bytes, WebSockets, stream URLs, the preview proxy).
 * Every shape comes from a zod schema, never written out again.
 */
import { z } from "zod";
import { fileWrittenSchema, streamWriteQuerySchema } from "../../protocol/files.ts";
import { createCodeContextRequestSchema, executionSchema, runCodeRequestSchema } from "../../protocol/code.ts";
import { sandboxIdSchema } from "../../protocol/sandbox.ts";
import { terminalUrlRequestSchema } from "../../protocol/stream-url.ts";
import { createTerminalRequestSchema, resizeTerminalRequestSchema, writeTerminalRequestSchema } from "../../protocol/terminals.ts";
import { exposePortRequestSchema } from "../../protocol/preview-ports.ts";
import * as s from "./schemas.ts";
import * as b from "./backup-schemas.ts";
import { createBackupRequestSchema } from "../../protocol/backups.ts";
import { createArchiveRequestSchema } from "../../protocol/archive.ts";
import { derivedPathItems } from "./openapi-operations.ts";
import { body, bytes, json, lastEventIdHeader, mintOp, op, queryParameters, schema, signedStream, sse, bid, cid, eid, pid, portParam, tid, type Json } from "./openapi-parts.ts";

/** The operations written here, with those derived from the method bindings merged in. */
function withDerived(paths: Record<string, Json>): Record<string, Json> {
  for (const [path, item] of Object.entries(derivedPathItems())) paths[path] = { ...item, ...paths[path] };
  return paths;
}

export function openApiDocument(serverUrl?: string): Json {
  const streamParameters = [
    ...queryParameters(s.streamQuery),
    lastEventIdHeader,
  ];
  const sandbox = "/v1/sandboxes/{id}";
  return {
    openapi: "3.1.0",
    info: {
      title: "Sandbox API",
      version: "1",
      description:
        "Run commands in per-sandbox containers. Every /v1/sandboxes route needs `Authorization: Bearer <SANDBOX_API_TOKEN>`. " +
        "A sandbox's container starts on first use and sleeps when idle. File paths are relative to the sandbox's workspace; " +
        "a path that leads out of it is refused with 403 PATH_OUTSIDE_WORKSPACE.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    security: [{ bearer: [] }],
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
      schemas: { Error: schema(s.errorResponseSchema) },
      parameters: {
        sandboxId: { name: "id", in: "path", required: true, schema: schema(sandboxIdSchema), description: "Sandbox id" },
      },
    },
    paths: withDerived({
      [sandbox]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        get: op("Sandbox state (starts its container if needed)", { 200: json(s.sandboxInfoSchema.extend({ id: z.string() }), "Sandbox") }),
        delete: op(
          "Destroy the sandbox's container now (SIGKILL). `keep=true` saves its durable workspace first (nothing is destroyed when that fails); " +
            "without it the durable workspace is forgotten (snapshots stay).",
          { 204: { description: "Destroyed" } },
          { parameters: queryParameters(b.destroyQuery) },
        ),
      },
      [`${sandbox}/config`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        patch: op(
          "Change sandbox settings. The isolation fields confine commands under the local container runtime (on Cloudflare the container is " +
            "the isolation); changing them restarts a running container. Asking for an isolation the machine lacks fails with 501 ISOLATION_UNAVAILABLE.",
          { 204: { description: "Saved" } },
          { requestBody: body(s.configRequestSchema) },
        ),
      },
      [`${sandbox}/info`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        get: op("Status, resources and isolation of the sandbox's container", { 200: json(s.sandboxDetailsSchema.extend({ id: z.string(), persistence: b.persistenceStatusSchema }), "Info") }),
      },
      [`${sandbox}/instructions`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        get: op("A short description of the sandbox for an agent's tool prompt", { 200: json(s.instructionsSchema, "Instructions") }),
      },
      [`${sandbox}/isolation`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        get: op("What isolation the machine running the sandbox offers", { 200: json(s.isolationSupportSchema, "Support") }),
      },
      [`${sandbox}/files/content`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        get: op("Download a file's bytes (streamed; headers x-file-size, x-file-binary, x-file-path)", { 200: bytes("The file") }, {
          parameters: queryParameters(s.fileQuery),
        }),
        put: op("Upload a file as the raw request body (streamed, any size up to the container's limit)", { 200: json(fileWrittenSchema, "Written") }, {
          parameters: queryParameters(streamWriteQuerySchema),
          requestBody: { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } },
        }),
      },
      [`${sandbox}/processes/{pid}/logs/stream-url`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, pid],
        post: mintOp(
          "A signed URL of the process's log stream, for `new EventSource(url)` (no Authorization header; resumes with Last-Event-ID); it names this run of the process: a later process with the same id is 410 STREAM_URL_STALE",
        ),
      },
      [`${sandbox}/code/contexts`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op(
          "Create a code context: a Python (default), JavaScript or TypeScript interpreter that keeps its state (variables, imports, " +
            "functions, working directory) between runs. It starts in the sandbox's env, and a session's cwd and env when given.",
          { 201: json(s.codeContextResponseSchema, "Created, its interpreter ready") },
          { requestBody: body(createCodeContextRequestSchema) },
        ),
        get: op("List code contexts (the default ones included, once made)", { 200: json(s.codeContextListSchema, "Contexts") }),
      },
      [`${sandbox}/code/contexts/{cid}`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, cid],
        get: op("A code context (404 CODE_CONTEXT_NOT_FOUND once deleted, or after the container restarted)", { 200: json(s.codeContextResponseSchema, "Context") }),
        delete: op("Delete a code context; its running and waiting runs end", { 200: json(s.codeContextDeletedSchema, "Deleted") }),
      },
      [`${sandbox}/code/contexts/{cid}/restart`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, cid],
        post: op("Restart a code context: a fresh interpreter under the same id; its running and waiting runs end", {
          200: json(s.codeContextResponseSchema, "Restarted"),
        }),
      },
      [`${sandbox}/code/run`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op(
          "Run code in a context (without contextId: the sandbox's default context for the language, made on first use). Errors in the code " +
            "are the Execution's `error`, not an error response. One cell runs at a time per context; a busy context makes the run wait " +
            "(or, with wait: false, fail with 409 CODE_CONTEXT_BUSY). `timeout` interrupts the cell; a cell that does not stop has its " +
            "interpreter killed and restarted (contextRestarted).",
          { 200: json(executionSchema, "The Execution: results (MIME bundles), logs, error, executionCount, duration") },
          { requestBody: body(runCodeRequestSchema) },
        ),
      },
      [`${sandbox}/code/run/stream`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op("Run code, streaming each event the moment it happens", { 200: sse("Code events.", "start, stdout, stderr, result, error, complete") }, {
          requestBody: body(runCodeRequestSchema),
        }),
      },
      [`${sandbox}/code/executions/{eid}/stream`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, eid],
        get: op(
          "Resume a broken run stream after an event id (Last-Event-ID or ?since=); works a short while after the run ended too",
          { 200: sse("Code events after the given one, ending with complete.", "start, stdout, stderr, result, error, complete, truncated") },
          { parameters: streamParameters },
        ),
      },
      [`${sandbox}/code/executions/{eid}/interrupt`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, eid],
        post: op("Interrupt a run (KeyboardInterrupt in Python; JavaScript execution is terminated). The context keeps its state.", {
          200: json(s.codeInterruptedSchema, "Interrupted"),
        }),
      },
      [`${sandbox}/terminals`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op(
          "Create a terminal: a program on a pseudo-terminal (default: the login shell) of the asked size. It is a resource, not a " +
            "connection: it runs until it exits or is killed, whoever watches it.",
          { 201: json(s.terminalResponseSchema, "Started") },
          { requestBody: body(createTerminalRequestSchema) },
        ),
        get: op("List terminals (exited ones too, until deleted)", { 200: json(s.terminalListSchema, "Terminals") }),
      },
      [`${sandbox}/terminals/{tid}`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        get: op("A terminal (404 TERMINAL_NOT_FOUND for an unknown id)", { 200: json(s.terminalResponseSchema, "Terminal") }),
        delete: op("Kill (when running) and forget a terminal", { 200: json(s.terminalIdResultSchema, "Deleted") }),
      },
      [`${sandbox}/terminals/{tid}/output`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        get: op("The retained output after a cursor, and the cursor to pass next time", { 200: json(s.terminalOutputSchema, "Output") }, {
          parameters: queryParameters(s.terminalSinceQuery),
        }),
      },
      [`${sandbox}/terminals/{tid}/write`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        post: op("Input as typed (utf8 text or base64 bytes)", { 200: json(s.terminalWriteResultSchema, "Written") }, { requestBody: body(writeTerminalRequestSchema) }),
      },
      [`${sandbox}/terminals/{tid}/resize`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        post: op("Resize: the program sees SIGWINCH and the new size", { 200: json(s.terminalResponseSchema, "Resized") }, { requestBody: body(resizeTerminalRequestSchema) }),
      },
      [`${sandbox}/terminals/{tid}/interrupt`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        post: op("Ctrl-C: SIGINT to the foreground job", { 200: json(s.terminalIdResultSchema, "Interrupted") }),
      },
      [`${sandbox}/terminals/{tid}/kill`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        post: op("Signal the terminal's whole process group", { 200: json(s.terminalKillResultSchema, "Signalled") }, {
          parameters: queryParameters(s.terminalKillQuery),
        }),
      },
      [`${sandbox}/terminals/{tid}/wait`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        get: op("Wait until the program has exited; the final record", { 200: json(s.terminalResponseSchema, "Exited") }),
      },
      [`${sandbox}/terminals/{tid}/ws`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        get: op(
          "A viewer's WebSocket (send Upgrade: websocket). From `since` on, binary frames carry output; after each batch a text frame " +
            '{"type":"cursor","cursor":n} gives the cursor to reconnect with; {"type":"truncated","droppedBytes":n} says output asked for is ' +
            'gone; {"type":"exit","exitCode":n} ends it. Binary frames sent are input; {"type":"resize","cols":c,"rows":r} resizes. Closing ' +
            "a viewer leaves the terminal running.",
          { 101: { description: "Switching to the WebSocket" } },
          { parameters: queryParameters(s.terminalSinceQuery), ...signedStream },
        ),
      },
      [`${sandbox}/ports`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op(
          "Expose a port of the sandbox (1024–65535, not the sandbox's own server port) at a preview URL on an origin of its own: " +
            "https://{port}-{id}.{SANDBOX_PREVIEW_DOMAIN}/, or http://{port}-{id}.localhost:{port}/ when this service is on a loopback origin, " +
            "or {SANDBOX_PREVIEW_PATH_ORIGIN}/v1/sandboxes/{id}/ports/{port}/ where the operator set one. Private unless `public`: the URL " +
            "carries a token once. 400 INVALID_PORT, 400 SANDBOX_ID_NOT_HOST_SAFE (host-based URLs need an id of lowercase letters, digits and -), " +
            "409 PORT_ALREADY_EXPOSED, 501 PREVIEW_DOMAIN_NOT_CONFIGURED.",
          { 201: json(s.exposedPortResponseSchema, "Exposed") },
          { requestBody: body(exposePortRequestSchema) },
        ),
        get: op("The exposed ports and their URLs", { 200: json(s.exposedPortListSchema, "Exposed ports") }),
      },
      [`${sandbox}/ports/{port}`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, portParam],
        delete: op("Unexpose a port: its URL and token stop working (404 PORT_NOT_EXPOSED)", { 200: json(s.unexposedPortSchema, "Unexposed") }),
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
            "404 PORT_NOT_EXPOSED, 502 PORT_NOT_LISTENING.",
          { 200: { description: "The port's own answer" }, 302: { description: "The token traded for a cookie" }, 101: { description: "A WebSocket to the port" } },
          { security: [{}, { bearer: [] }] },
        ),
      },
      [`${sandbox}/terminals/{tid}/ws-url`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, tid],
        post: mintOp(
          'A signed ws:/wss: URL of the terminal\'s viewer socket, for `new WebSocket(url)` (no Authorization header; `&since=` may be added); `mode: "view"`: output only, input and resizes refused (TERMINAL_VIEW_ONLY)',
          terminalUrlRequestSchema,
        ),
      },
      [`${sandbox}/backups`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op(
          "Snapshot the workspace (or `paths`) into the Worker's R2 bucket, streamed as a gzip'd tar. 501 PERSISTENCE_NOT_CONFIGURED without the bucket binding.",
          { 201: json(b.backupResponseSchema, "Saved") },
          { requestBody: body(createBackupRequestSchema) },
        ),
        get: op("This sandbox's snapshots, oldest first", { 200: json(b.backupListSchema, "Snapshots") }),
      },
      [`${sandbox}/backups/{bid}`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, bid],
        delete: op("Delete a snapshot (404 BACKUP_NOT_FOUND for an id this sandbox does not have)", { 200: json(b.deleteBackupResultSchema, "Deleted") }),
      },
      [`${sandbox}/backups/{bid}/restore`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }, bid],
        post: op("Replace the snapshot's paths in the running sandbox with what it holds", { 200: json(b.restoreBackupResultSchema, "Restored") }),
      },
      [`${sandbox}/archive/export`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        post: op(
          "The workspace (or `paths`, less `exclude`) as a tar stream: gzip'd (`application/gzip`) unless `format` is \"tar\" (`application/x-tar`). Links stay links.",
          { 200: bytes("The archive, streamed as it is made") },
          { requestBody: body(createArchiveRequestSchema) },
        ),
      },
      [`${sandbox}/archive`]: {
        parameters: [{ $ref: "#/components/parameters/sandboxId" }],
        put: op(
          "Extract a tar or tar.gz body over the workspace, streamed. Absolute paths, `..`, hard links out and writing through a link are 400 INVALID_ARCHIVE.",
          { 200: json(b.importArchiveResultSchema, "Extracted") },
          { requestBody: { required: true, content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } } } },
        ),
      },
    }),
  };
}
