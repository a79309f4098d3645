/**
 * The local container runtime's wire contract (runtime/ serves it; the Durable Object's runtime
 * channel calls what only the runtime offers, its container runs through the runtime's Docker engine).
 * Only used on a developer machine: on Cloudflare none of this is involved.
 *
 * Every call carries the runtime's secret (`Authorization: Bearer <secret>`), else 401 UNAUTHORIZED:
 * the runtime listens on loopback, where commands of the sandboxes can reach it too.
 *
 *   POST   /containers/{key}/start    RuntimeStartRequest → RuntimeStartAnswer (once listening)
 *   GET    /containers/{key}          → RuntimeContainerInfo
 *   GET    /containers/{key}/exit?runId=&waitMs=  long poll → RuntimeContainerInfo of that run (early on exit)
 *   POST   /containers/{key}/signal   {signal: number} → RuntimeContainerInfo
 *   DELETE /containers/{key}          kill (SIGKILL, whole process tree) → RuntimeContainerInfo
 *   GET    /health                    → RuntimeHealth
 *   PUT    /containers/{key}/egress   RuntimeEgress → {applied: true}: the sandbox's network policy and
 *                                     secrets, in force at once (also given with a start)
 *   GET    /containers/{key}/egress/audit?since=&limit=&waitMs=  → AuditPage (long poll while nothing is new)
 *   POST   /containers/{key}/egress/audit  RuntimeAuditRecord → AuditEntry: an entry of the Worker's outbound handler
 *   POST   /containers/{key}/egress/send   a request the Worker's outbound handler judged, carried out (RUNTIME_EGRESS_SEND);
 *                                     a GET with `Upgrade: websocket` there is carried as a WebSocket handshake
 *   GET    /isolation                 → IsolationSupport (what this machine offers: detectIsolation())
 *   POST   /isolation/check           IsolationRequest → {allowed: true}, or why not (ISOLATION_NOT_ALLOWED 403,
 *                                     INVALID_REQUEST 400 for a path that does not exist)
 * Errors: protocol `errorBody` JSON (a bad signal number is INVALID_SIGNAL). A start whose container
 * server refused its isolation answers with the server's own code (ISOLATION_UNAVAILABLE,
 * INVALID_REQUEST), not a generic failure; one outside the operator's walls is ISOLATION_NOT_ALLOWED,
 * and one past the runtime's limit of live sandboxes TOO_MANY_SANDBOXES (429).
 */
import * as z from "zod";
import { isolationRequestSchema } from "./isolation.ts";
import { auditEntrySchema, networkPolicySchema } from "./network.ts";
import { sandboxIdSchema } from "./sandbox.ts";
import type { ErrorCode } from "./errors.ts";
import { lazySchema } from "./lazy-schema.ts";

/** A sandbox's egress as its Durable Object hands it to the runtime: the policy, and the values of the secrets it names. */
export const runtimeEgressSchema = lazySchema(() => z.strictObject({
  policy: networkPolicySchema,
  secrets: z.record(z.string(), z.string()),
}));
export type RuntimeEgress = z.output<typeof runtimeEgressSchema>;

/** An entry of the Worker's outbound handler for a sandbox's audit trail (`POST /containers/{key}/egress/audit`): the runtime numbers and dates it. */
export const runtimeAuditRecordSchema = lazySchema(() => auditEntrySchema.omit({ seq: true, time: true }));

/**
 * A request the Worker's outbound handler judged, carried out by the runtime
 * (`POST /containers/{key}/egress/send`): the request's own method and body, its URL and headers in
 * these fields (its headers cannot be the call's own: the call answers to the runtime's secret). The
 * answer is the destination's, as it came, or, where the runtime would not or could not reach it,
 * `refusedHeader` saying `never` (an address no sandbox reaches) or `failed`, with the reason as the body.
 */
export const RUNTIME_EGRESS_SEND = {
  methodHeader: "x-egress-method",
  urlHeader: "x-egress-url",
  /** The request's headers, `[name, value]` pairs as JSON, URI-encoded. */
  headersHeader: "x-egress-headers",
  refusedHeader: "x-egress-refused",
} as const;

// The variables a server reads as it boots live in a module without zod, so the boot can read them cheaply.
export { ASSIGNMENT_FROM_STDIN_VAR, IMAGE_ENV_VAR, LISTEN_FD_VAR, REHEARSE_VAR, RUN_TAG_VAR, SECRET_FROM_STDIN_VAR } from "./server-env-names.ts";

/**
 * The env var a container created through the runtime's Docker engine must carry: the secret its
 * server answers to. The engine takes it out of the container's environment (no command sees it).
 */
export { ENGINE_SERVER_SECRET_VAR } from "./server-env-names.ts";

/** The port the container server listens on inside a container (the Durable Object's defaultPort). */
export const CONTAINER_SERVER_PORT = 3000;

/**
 * Such a server reports its progress on file descriptor 3 (a pipe the runtime opened), one line each:
 * `booted` once it waits for its assignment, `listening` once it serves; then it closes the pipe. The
 * runtime hands a sandbox its server the moment it says so, with no polling of the port.
 */
export const SERVER_STATUS_FD = 3;
export const SERVER_STATUS = { booted: "booted", listening: "listening" } as const;

/**
 * A server the runtime starts inside a sandbox's container is handed its listening socket, bound on
 * the host's loopback before the container's own network namespace existed, as this descriptor; it
 * serves on it instead of binding a port (which would be reachable only inside the container). The
 * variable names the descriptor.
 */
export const SERVER_LISTEN_FD = 4;

/** What a server waiting for its sandbox reads from stdin (one JSON object, then end of input). */
export const serverAssignmentSchema = lazySchema(() => z.object({
  /** What the server answers to. */
  secret: z.string().min(1),
  /**
   * The server's environment for this sandbox, exactly as a server started for it would have had it
   * (PORT, WORKSPACE, the isolation variables, …). It replaces the boot environment, but for the run tag.
   */
  env: z.record(z.string(), z.string()),
}));
export type ServerAssignment = z.output<typeof serverAssignmentSchema>;

export const runtimeStartRequestSchema = lazySchema(() => z.object({
  /** Environment of the container (Container `envVars`). */
  env: z.record(z.string(), z.string()).optional(),
  /** Container entrypoint override; the local runtime only runs the container server and ignores it. */
  entrypoint: z.array(z.string()).optional(),
  /** Default true. */
  enableInternet: z.boolean().optional(),
  /**
   * Isolation of this sandbox's commands, over the runtime's defaults. Applied after `env`, so the
   * container's env vars can never change it.
   */
  isolation: isolationRequestSchema.optional(),
  /** The sandbox's network policy and secrets, in force from its first packet. */
  egress: runtimeEgressSchema.optional(),
}));
export type RuntimeStartRequest = z.output<typeof runtimeStartRequestSchema>;

/**
 * The env var a container created through the runtime's Docker engine may carry with what its
 * sandbox asks beyond the container's own settings: the sandbox key the runtime knows it by (its
 * folder, egress entry and pool slot, which the runtime's own API addresses too; without one, the
 * key comes from the container's name), its isolation and its network policy (with the secrets it
 * names), as JSON of `EngineStartSettings`. The engine takes it out of the container's environment
 * and applies it as a start through the runtime's API would.
 */
export const ENGINE_START_VAR = "SANDBOX_ENGINE_START";
export const engineStartSettingsSchema = lazySchema(() => runtimeStartRequestSchema
  .pick({ isolation: true, egress: true })
  .extend({ key: sandboxIdSchema.optional() })
  .strict());
export type EngineStartSettings = z.output<typeof engineStartSettingsSchema>;

/** `POST /containers/{key}/signal`: a signal number, as `ctx.container.signal(signo)` takes it. */
export const runtimeSignalRequestSchema = lazySchema(() => z.object({ signal: z.number().int().min(1).max(64) }));

export interface RuntimeContainerInfo {
  key: string;
  running: boolean;
  /** Identifies one start of the container: a later start of the same key gets a new one. */
  runId?: string;
  pid?: number;
  /** Container port → loopback port on this machine where it is reachable. */
  ports?: Record<string, number>;
  startedAt?: string;
  /** Set once the container stopped. */
  exitCode?: number;
  signal?: string;
  /** Last lines of the container's own output when it failed to start. */
  logTail?: string;
  /** Its traffic goes out only through the egress proxy, under the sandbox's network policy (a container with network). */
  egressProxy?: boolean;
  /**
   * Why the last start of its container through the Docker engine was refused, with the runtime's code
   * (workerd tells its Durable Object no reason for a failed start); gone once a start succeeds.
   */
  startRefusal?: StartRefusal;
}

export interface StartRefusal {
  code: ErrorCode;
  message: string;
}

/**
 * The answer to a start: the run, and the secret its container server answers to. Only the caller
 * of a start (which holds the runtime's secret) learns it; `GET /containers/{key}` never shows it.
 */
export interface RuntimeStartAnswer extends RuntimeContainerInfo {
  secret: string;
}

/** `GET /health`: the runtime's state and the operator's walls. */
export interface RuntimeHealth {
  status: "ok";
  containers: number;
  maxContainers: number;
  /** Booted container servers waiting for a sandbox (the warm pool), and how many it keeps. */
  warmServers: number;
  warmPoolSize: number;
  /** The runtime's mode: the floor of every sandbox's isolation. */
  isolation: string;
  /** Host paths sandboxes may mount. */
  allowedPaths: string[];
  /** Whether sandboxes may have outbound network at all. */
  networkAllowed: boolean;
  dataDir: string;
  /** What each sandbox may take of the machine, and what enforces it (cgroup v2, cgroup v1, or rlimits). */
  limits?: { pids: number; memoryBytes: number; cpuWeight: number; openFiles: number; diskBytes?: number; enforcedBy: string };
}

/** Longest an audit long poll is held before the runtime answers with nothing new. */
export const RUNTIME_AUDIT_POLL_MAX_MS = 25_000;

/** Longest a `/exit` long poll is held before the runtime answers "still running". */
export const RUNTIME_EXIT_POLL_MAX_MS = 60_000;
