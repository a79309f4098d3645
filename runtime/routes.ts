/**
 * The local runtime's routes (protocol/runtime.ts), as a route table for the server kit. Bodies are
 * the protocol's values as they are, without the container server's success envelope.
 */
import { isValidSandboxId } from "../protocol/sandbox.ts";
import { isolationRequestSchema, type IsolationMode } from "../protocol/isolation.ts";
import { auditQuerySchema } from "../protocol/network.ts";
import {
  RUNTIME_AUDIT_POLL_MAX_MS,
  RUNTIME_EXIT_POLL_MAX_MS,
  runtimeAuditRecordSchema,
  runtimeEgressSchema,
  runtimeSignalRequestSchema,
  runtimeStartRequestSchema,
  type RuntimeHealth,
  type RuntimeStartAnswer,
  type StartRefusal,
} from "../protocol/runtime.ts";
import { detectIsolation } from "../server-kit/detect-isolation.ts";
import { readJsonBody } from "../server-kit/http/body.ts";
import { sendJson } from "../server-kit/http/response.ts";
import type { Route } from "../server-kit/http/router.ts";
import type { RoutedRequest } from "../server-kit/http/serve.ts";
import { isServiceError, ServiceError } from "../server-kit/service-error.ts";
import { checkIsolationRequest, type OperatorPolicy } from "./policy.ts";
import type { ContainerPool } from "./pool.ts";
import { startRefusalOf } from "./start-failure.ts";
import { reportedLimits } from "./container/sandbox-container.ts";
import { carryWorkerRequest } from "./egress/worker-carrier.ts";

/** Largest request body the runtime reads: its requests are small JSON objects. */
const MAX_BODY_BYTES = 1024 * 1024;

/** What the runtime's handlers share. */
export interface RuntimeContext {
  readonly pool: ContainerPool;
  readonly dataDir: string;
  /** Isolation of sandboxes that ask for none. */
  readonly isolation: IsolationMode;
  /** The bubblewrap the container servers are given (undefined: `bwrap` on PATH). */
  readonly bwrapPath: string | undefined;
  /** The operator's walls every sandbox's isolation is checked against. */
  readonly policy: OperatorPolicy;
  /** Told when a caller asks a container to stop (sleep, destroy), so a watcher can tell that from a crash. */
  readonly onStopAsked?: ((key: string) => void) | undefined;
  /** Why each sandbox's last start through the Docker engine was refused (docker-engine/engine.ts). */
  readonly startRefusals: ReadonlyMap<string, StartRefusal>;
}

/** Signals that stop a container server (what a sleep or a destroy sends). */
const STOP_SIGNALS = new Set([1, 2, 9, 15]);

export interface RuntimeRequest extends RoutedRequest {
  readonly runtime: RuntimeContext;
}

function health({ res, runtime }: RuntimeRequest): void {
  const body: RuntimeHealth = {
    status: "ok",
    containers: runtime.pool.size,
    maxContainers: runtime.pool.maxContainers,
    warmServers: runtime.pool.warmBootedCount,
    warmPoolSize: runtime.pool.warmPoolSize,
    isolation: runtime.isolation,
    allowedPaths: [...runtime.policy.allowedPaths],
    networkAllowed: runtime.policy.networkAllowed,
    dataDir: runtime.dataDir,
    limits: reportedLimits(runtime.pool.containerSettings),
  };
  sendJson(res, 200, body);
}

/** Whether a sandbox may have this isolation: 200, else the policy's error (403 / 400). */
async function checkIsolation(ctx: RuntimeRequest): Promise<void> {
  const request = await readJsonBody(ctx.req, isolationRequestSchema, { maxBytes: MAX_BODY_BYTES, whenEmpty: {} });
  checkIsolationRequest(ctx.runtime.policy, request);
  sendJson(ctx.res, 200, { allowed: true });
}

function isolation({ res, runtime }: RuntimeRequest): void {
  sendJson(res, 200, detectIsolation(runtime.bwrapPath === undefined ? {} : { bwrapPath: runtime.bwrapPath }));
}

function containerKey(ctx: RuntimeRequest): string {
  const key = ctx.params.key!;
  if (!isValidSandboxId(key)) throw new ServiceError("INVALID_SANDBOX_ID", `invalid container key "${key}"`);
  return key;
}

async function start(ctx: RuntimeRequest): Promise<void> {
  const key = containerKey(ctx);
  const request = await readJsonBody(ctx.req, runtimeStartRequestSchema, { maxBytes: MAX_BODY_BYTES, whenEmpty: {} });
  checkIsolationRequest(ctx.runtime.policy, request.isolation ?? {});
  if (request.egress) await ctx.runtime.pool.containerSettings.egress.update(key, request.egress.policy, request.egress.secrets);
  let container;
  try {
    container = await ctx.runtime.pool.start(key, request);
  } catch (error) {
    if (isServiceError(error)) throw error;
    const logTail = (error as { logTail?: string }).logTail;
    const refusal = logTail ? startRefusalOf(logTail) : undefined;
    if (refusal) throw new ServiceError(refusal.code, refusal.message, { logTail });
    throw new ServiceError("CONTAINER_UNAVAILABLE", (error as Error).message, logTail ? { logTail } : undefined);
  }
  const answer: RuntimeStartAnswer = { ...container.info(), secret: container.secret };
  sendJson(ctx.res, 200, answer);
}

function info(ctx: RuntimeRequest): void {
  const key = containerKey(ctx);
  const startRefusal = ctx.runtime.startRefusals.get(key);
  sendJson(ctx.res, 200, { ...ctx.runtime.pool.info(key), ...(startRefusal ? { startRefusal } : {}) });
}

async function waitForExit(ctx: RuntimeRequest): Promise<void> {
  const key = containerKey(ctx);
  const waitMs = Math.min(Math.max(Number(ctx.url.searchParams.get("waitMs") ?? 0) || 0, 0), RUNTIME_EXIT_POLL_MAX_MS);
  const runId = ctx.url.searchParams.get("runId") ?? undefined;
  sendJson(ctx.res, 200, await ctx.runtime.pool.waitForExit(key, runId, waitMs));
}

async function signal(ctx: RuntimeRequest): Promise<void> {
  const key = containerKey(ctx);
  const request = await readJsonBody(ctx.req, runtimeSignalRequestSchema, {
    maxBytes: MAX_BODY_BYTES,
    whenEmpty: {},
    invalidCode: "INVALID_SIGNAL",
  });
  if (STOP_SIGNALS.has(request.signal)) ctx.runtime.onStopAsked?.(key);
  sendJson(ctx.res, 200, ctx.runtime.pool.signal(key, request.signal));
}

async function destroy(ctx: RuntimeRequest): Promise<void> {
  const key = containerKey(ctx);
  ctx.runtime.onStopAsked?.(key);
  sendJson(ctx.res, 200, await ctx.runtime.pool.destroy(key));
}

async function setEgress(ctx: RuntimeRequest): Promise<void> {
  const key = containerKey(ctx);
  const request = await readJsonBody(ctx.req, runtimeEgressSchema, { maxBytes: MAX_BODY_BYTES });
  await ctx.runtime.pool.containerSettings.egress.update(key, request.policy, request.secrets);
  sendJson(ctx.res, 200, { applied: true });
}

async function egressAudit(ctx: RuntimeRequest): Promise<void> {
  const key = containerKey(ctx);
  const query = auditQuerySchema.safeParse({ since: ctx.url.searchParams.get("since") ?? undefined, limit: ctx.url.searchParams.get("limit") ?? undefined });
  if (!query.success) throw new ServiceError("INVALID_REQUEST", "since and limit are whole numbers (limit 1–1000)");
  const waitMs = Math.min(Math.max(Number(ctx.url.searchParams.get("waitMs") ?? 0) || 0, 0), RUNTIME_AUDIT_POLL_MAX_MS);
  const audit = ctx.runtime.pool.containerSettings.egress.of(key).audit;
  const since = query.data.since ?? 0;
  await audit.waitAfter(since, waitMs);
  sendJson(ctx.res, 200, audit.read(since, query.data.limit));
}

/** An entry of the Worker's outbound handler (it judged a request of the sandbox's): one trail for the sandbox, numbered here. */
async function addEgressAudit(ctx: RuntimeRequest): Promise<void> {
  const key = containerKey(ctx);
  const record = await readJsonBody(ctx.req, runtimeAuditRecordSchema, { maxBytes: MAX_BODY_BYTES });
  sendJson(ctx.res, 200, ctx.runtime.pool.containerSettings.egress.of(key).audit.add(record));
}

/** A request the Worker's outbound handler judged for the sandbox, carried out by the runtime (egress/worker-carrier.ts). */
async function sendEgress(ctx: RuntimeRequest): Promise<void> {
  const key = containerKey(ctx);
  await carryWorkerRequest(ctx.req, ctx.res, ctx.runtime.pool.containerSettings.egress.of(key).testHosts);
}

/** The path of `sendEgress`, which also takes a WebSocket upgrade (server.ts). */
export const WORKER_SEND_PATH = /^\/containers\/[^/]+\/egress\/send$/;

export const RUNTIME_ROUTES: readonly Route<RuntimeRequest>[] = [
  { method: "GET", path: "/health", handler: health },
  { method: "GET", path: "/isolation", handler: isolation },
  { method: "POST", path: "/isolation/check", handler: checkIsolation },
  { method: "POST", path: "/containers/:key/start", handler: start },
  { method: "GET", path: "/containers/:key", handler: info },
  { method: "GET", path: "/containers/:key/exit", handler: waitForExit },
  { method: "POST", path: "/containers/:key/signal", handler: signal },
  { method: "DELETE", path: "/containers/:key", handler: destroy },
  { method: "PUT", path: "/containers/:key/egress", handler: setEgress },
  { method: "GET", path: "/containers/:key/egress/audit", handler: egressAudit },
  { method: "POST", path: "/containers/:key/egress/audit", handler: addEgressAudit },
  { method: "POST", path: "/containers/:key/egress/send", handler: sendEgress },
];
