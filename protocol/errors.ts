/**
 * The one table of error codes. Every error on the wire — container server, Worker API and the
 * client's rebuilt error classes — names one of these codes; the HTTP status comes from here.
 */
import * as z from "zod";
import { lazySchema } from "./lazy-schema.ts";

export const ERROR_CODES = {
  INVALID_JSON: 400,
  INVALID_REQUEST: 400,
  INVALID_SIGNAL: 400,
  INVALID_SANDBOX_ID: 400,
  /** A preview port outside 1024–65535, or the container server's own port. */
  INVALID_PORT: 400,
  /** A repository URL a clone refuses: an unknown scheme, or text git would read as an option. */
  INVALID_GIT_URL: 400,
  /** An archive that is not gzip'd tar, or names entries that would land outside the workspace. */
  INVALID_ARCHIVE: 400,
  /** A backup past its expiry (its `ttl`), asked for before the bucket let go of it; Cloudflare's code and status. */
  BACKUP_EXPIRED: 400,
  UNAUTHORIZED: 401,
  /** A request to a private preview port with neither its token, its cookie nor the API token. */
  PORT_TOKEN_REQUIRED: 401,
  /** A sandbox id that cannot be a host name (capitals, `.` or `_`, too long) asked for a preview URL where only host-based ones are served. */
  SANDBOX_ID_NOT_HOST_SAFE: 400,
  /** A signed stream URL whose signature does not match what it names (tampered, or for another sandbox, stream or route). */
  STREAM_URL_INVALID: 401,
  /** A signed stream URL past its expiry (its signature was good): mint a new one. */
  STREAM_URL_EXPIRED: 401,
  /** Input or a resize on a terminal socket opened view-only (a `mode: "view"` URL). */
  TERMINAL_VIEW_ONLY: 403,
  PATH_OUTSIDE_WORKSPACE: 403,
  PERMISSION_DENIED: 403,
  /** A preview port's token (in `?token=` or the cookie) that is not the port's current one. */
  PORT_TOKEN_INVALID: 403,
  /** A service worker script whose scope (by its `Service-Worker-Allowed` header) would reach outside its preview port. */
  SERVICE_WORKER_SCOPE_REFUSED: 403,
  /** The sandbox asked for walls lower than the operator allows (isolation below the floor, a path not allowed, raw bwrap arguments). */
  ISOLATION_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  PROCESS_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  /** A code context id the sandbox does not know (never created, deleted, or gone with a restarted container). */
  CODE_CONTEXT_NOT_FOUND: 404,
  /** A run id that is unknown or finished too long ago to resume. */
  CODE_EXECUTION_NOT_FOUND: 404,
  /** A terminal id the sandbox does not know (never created, or gone with a restarted container). */
  TERMINAL_NOT_FOUND: 404,
  /** A preview port that is not exposed (never, or no longer): answered without waking the container. */
  PORT_NOT_EXPOSED: 404,
  /** A request on the origin of path-based preview URLs for anything but a preview port: the API and the console are not served there. */
  PREVIEW_ORIGIN_ONLY: 404,
  /** A backup id this sandbox does not have (never made, deleted, or another sandbox's). */
  BACKUP_NOT_FOUND: 404,
  /** A secret name the sandbox does not have. */
  SECRET_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PROCESS_EXISTS: 409,
  TERMINAL_EXISTS: 409,
  PORT_ALREADY_EXPOSED: 409,
  /** A custom preview token another exposed port of the sandbox already has. */
  PREVIEW_TOKEN_IN_USE: 409,
  /** Input or a resize for a terminal whose program has exited. */
  TERMINAL_EXITED: 409,
  SESSION_EXISTS: 409,
  /** A fork into a sandbox id that has run before (or holds settings): forks make new sandboxes only. */
  SANDBOX_EXISTS: 409,
  /** An entry vanished (or could not be read) while an archive of its folder was being made: nothing is kept; try again. */
  ARCHIVE_SOURCE_CHANGED: 409,
  FILE_EXISTS: 409,
  PROCESS_NOT_RUNNING: 409,
  STDIN_CLOSED: 409,
  IS_A_DIRECTORY: 409,
  NOT_A_DIRECTORY: 409,
  DIRECTORY_NOT_EMPTY: 409,
  /** The context is running a cell and the caller asked not to wait (`wait: false`). */
  CODE_CONTEXT_BUSY: 409,
  STALE_PROCESS_HANDLE: 410,
  /** A retry whose idempotency key (or process id) names a run that already happened and whose record is no longer kept: nothing is run again. */
  IDEMPOTENT_RUN_GONE: 410,
  /** A signed stream URL for a process that is gone: another run now has its id (the URL names the run it was minted for). */
  STREAM_URL_STALE: 410,
  /** A preview URL with a good token whose port was exposed in an earlier container: expose the port again (same URL, same token). */
  STALE_PREVIEW_URL: 410,
  PAYLOAD_TOO_LARGE: 413,
  /** A watch or a change digest over more directories or entries than WATCH_LIMITS allows. */
  WATCH_LIMIT_EXCEEDED: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SPAWN_FAILED: 422,
  /** An idempotency key (or process id) used again, within its window, for a different request. */
  IDEMPOTENCY_KEY_REUSED: 422,
  /** git clone exited with an error (the context carries the end of its stderr). */
  GIT_CLONE_FAILED: 422,
  /**
   * A command ran out of its time limit and was killed (an exec's context is its result so far); also
   * a wait on the caller's side that ran out (waitForExit, waitForPort). 422, not 408: the request was
   * read and run, and browsers re-send a request answered 408 on a reused connection, which would run
   * the command again; not 5xx: nothing failed on the service's side.
   */
  EXECUTION_TIMEOUT: 422,
  /** A terminal's WebSocket route reached by a request that does not ask to upgrade. */
  WEBSOCKET_UPGRADE_REQUIRED: 426,
  TOO_MANY_PROCESSES: 429,
  TOO_MANY_SESSIONS: 429,
  /** The local runtime runs as many sandboxes as its operator allows. */
  TOO_MANY_SANDBOXES: 429,
  TOO_MANY_CODE_CONTEXTS: 429,
  /** Live terminals per sandbox at most (LIMITS.maxTerminals). */
  TOO_MANY_TERMINALS: 429,
  /** Open watches per sandbox at most (LIMITS.maxWatches). */
  TOO_MANY_WATCHES: 429,
  /** git clone ran out of its time limit (and was killed with everything it started). */
  GIT_CLONE_TIMEOUT: 408,
  /** An archive extraction past its deadline (a body dripped in too slowly, or an extraction that stopped progressing): nothing was kept. */
  EXTRACTION_TIMEOUT: 408,
  INTERNAL_ERROR: 500,
  ISOLATION_UNAVAILABLE: 501,
  /** Backups need an R2 bucket binding the Worker does not have (wrangler.toml `[[r2_buckets]]`). */
  PERSISTENCE_NOT_CONFIGURED: 501,
  /** Saving to or restoring from the bucket failed; an earlier save is left as it was. */
  BACKUP_FAILED: 502,
  /** No preview URL can be made on an origin of its own: no SANDBOX_PREVIEW_DOMAIN, and the service is not on a loopback origin (or none was given). */
  PREVIEW_DOMAIN_NOT_CONFIGURED: 501,
  /** A network policy that would restrict or inject where this platform cannot enforce it (the message says what is missing). */
  NETWORK_POLICY_UNAVAILABLE: 501,
  /** The interpreter a code context needs is not installed (the message says what to install). */
  INTERPRETER_UNAVAILABLE: 501,
  /** A capability this service does not have (bucket mounts, egress rules by host): the message says what is missing. */
  NOT_SUPPORTED: 501,
  CONTAINER_UNAVAILABLE: 503,
  /** A Docker Engine API call the local runtime's engine does not serve (it names the method and path). */
  ENGINE_CALL_NOT_SERVED: 501,
  /** The sandbox's disk is full (or its quota used up): what was being written is not there, nothing half-written is left. */
  INSUFFICIENT_STORAGE: 507,
  /** A snapshot past the sandbox's backup quota (bytes or count): nothing was kept. */
  BACKUP_QUOTA_EXCEEDED: 507,
  /** The Worker has no SANDBOX_API_TOKEN secret: it refuses every request rather than run open. */
  AUTH_NOT_CONFIGURED: 503,
  /** A client could not reach the service (or lost a stream) and gave up after its retries. */
  CONNECTION_FAILED: 502,
  /** An exposed preview port that nothing in the sandbox listens on. */
  PORT_NOT_LISTENING: 502,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The body of every error response. */
export const errorResponseSchema = lazySchema(() => z.object({
  success: z.literal(false),
  code: z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]),
  message: z.string(),
  httpStatus: z.number().int(),
  timestamp: z.string(),
  context: z.record(z.string(), z.unknown()).optional(),
}));
export type ErrorResponse = z.infer<typeof errorResponseSchema>;

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && Object.hasOwn(ERROR_CODES, value);
}

export function errorBody(code: ErrorCode, message: string, context?: Record<string, unknown>): ErrorResponse {
  return {
    success: false,
    code,
    message,
    httpStatus: ERROR_CODES[code],
    timestamp: new Date().toISOString(),
    ...(context === undefined ? {} : { context }),
  };
}

export function isErrorResponse(value: unknown): value is ErrorResponse {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { success?: unknown }).success === false &&
    isErrorCode((value as { code?: unknown }).code)
  );
}
