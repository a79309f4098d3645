/**
 * What only the local container runtime (runtime/) offers a sandbox, beside the container itself
 * (which workerd's `ctx.container` runs through the runtime's Docker engine, as on Cloudflare): the
 * operator's walls checked before a config keeps them, the network policy put in force at once, the
 * per-connection egress audit, whether the container's traffic goes through the egress proxy, and
 * what isolation the machine offers. The platform has no counterpart; on Cloudflare there is no
 * channel (SANDBOX_CONTAINER_URL unset).
 *
 * The runtime listens on loopback and answers only to SANDBOX_RUNTIME_SECRET (`npm start` or the test
 * setup generates it and hands it to the Worker as a binding).
 */
import type { ErrorCode } from "../../protocol/errors.ts";
import type { IsolationRequest, IsolationSupport } from "../../protocol/isolation.ts";
import type { AuditEntry, AuditPage, AuditQuery } from "../../protocol/network.ts";
import { RUNTIME_EGRESS_SEND, type RuntimeContainerInfo, type RuntimeEgress } from "../../protocol/runtime.ts";
import { readErrorBody } from "../rpc/error-response.ts";

const CALL_TIMEOUT_MS = 10_000;

/** Failures of the local runtime. The message says what to start; `code` is the runtime's wire code, when it gave one. */
export class LocalRuntimeError extends Error {
  override name = "LocalRuntimeError";
  readonly code: ErrorCode | undefined;

  constructor(message: string, code?: ErrorCode) {
    super(message);
    this.code = code;
  }
}

/** What to run when there is no container engine at all. */
export function missingRuntimeMessage(): string {
  return (
    "No container engine: Cloudflare Containers are not enabled here and SANDBOX_CONTAINER_URL is not set. " +
    "Locally, run `npm start` (wrangler dev together with the local container runtime and its Docker engine)."
  );
}

export function unreachableMessage(where: string, cause: unknown): string {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return (
    `The local container runtime at ${where} is not reachable (${reason}). ` +
    "Start it with `npm start`, or `npm run runtime` beside `wrangler dev` with containers on."
  );
}

function refusedMessage(url: string): string {
  return (
    `The local container runtime at ${url} refused this Worker's secret: SANDBOX_RUNTIME_SECRET must be the runtime's ` +
    "(`npm start` hands it over by itself)."
  );
}

export class RuntimeChannel {
  readonly url: string;
  readonly #secret: string | undefined;
  /** The sandbox key the runtime knows this sandbox by (its folder, egress entry and pool slot). */
  readonly key: string;

  constructor(runtimeUrl: string, key: string, runtimeSecret?: string) {
    this.url = runtimeUrl.replace(/\/+$/, "");
    this.#secret = runtimeSecret;
    this.key = key;
  }

  /**
   * Whether the runtime's operator lets a sandbox have this isolation; throws the runtime's refusal
   * (ISOLATION_NOT_ALLOWED, INVALID_REQUEST for a path that does not exist) as a LocalRuntimeError.
   */
  async checkIsolation(request: IsolationRequest): Promise<void> {
    await this.#call("POST", "/isolation/check", request, CALL_TIMEOUT_MS, "");
  }

  /** What the runtime says of this sandbox's container now (running, and whether its traffic goes through the egress proxy). */
  state(): Promise<RuntimeContainerInfo> {
    return this.#call<RuntimeContainerInfo>("GET", "", undefined, CALL_TIMEOUT_MS);
  }

  /** Puts a new network policy (and the secrets it names) in force for this sandbox, at once: running connections it denies are cut. */
  async setEgress(egress: RuntimeEgress): Promise<void> {
    await this.#call("PUT", "/egress", egress, CALL_TIMEOUT_MS);
  }

  /**
   * The sandbox's egress audit trail after `since` (the runtime keeps it across its container's
   * restarts); with `waitMs`, the runtime holds the answer until something new comes (a long poll).
   */
  egressAudit(query: AuditQuery, waitMs = 0, signal?: AbortSignal): Promise<AuditPage> {
    const search = new URLSearchParams();
    if (query.since !== undefined) search.set("since", String(query.since));
    if (query.limit !== undefined) search.set("limit", String(query.limit));
    if (waitMs > 0) search.set("waitMs", String(waitMs));
    return this.#call<AuditPage>("GET", `/egress/audit?${search}`, undefined, waitMs + CALL_TIMEOUT_MS, undefined, signal);
  }

  /** Adds an entry of the Worker's outbound handler to the sandbox's trail, beside the proxy's own. */
  async addEgressAudit(record: Omit<AuditEntry, "seq" | "time">): Promise<void> {
    await this.#call("POST", "/egress/audit", record, CALL_TIMEOUT_MS);
  }

  /**
   * Has the runtime carry out a request the Worker's outbound handler judged for this sandbox
   * (runtime/egress/worker-carrier.ts): the destination's answer, as it came, or the runtime's refusal
   * (RUNTIME_EGRESS_SEND.refusedHeader). No deadline: a download may take as long as it takes.
   */
  sendEgress(request: { method: string; url: string; headers: Headers; body: ReadableStream<Uint8Array> | null }): Promise<Response> {
    const upgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
    const headers: Record<string, string> = {
      [RUNTIME_EGRESS_SEND.methodHeader]: request.method,
      [RUNTIME_EGRESS_SEND.urlHeader]: request.url,
      [RUNTIME_EGRESS_SEND.headersHeader]: encodeURIComponent(JSON.stringify([...request.headers])),
      ...(this.#secret === undefined ? {} : { authorization: `Bearer ${this.#secret}` }),
      // A WebSocket handshake is carried as one: workerd then answers with the socket the runtime joined to the server's.
      ...(upgrade ? { upgrade: "websocket" } : {}),
    };
    const method = upgrade ? "GET" : "POST";
    return fetch(`${this.url}/containers/${encodeURIComponent(this.key)}/egress/send`, { method, headers, body: upgrade ? null : request.body, redirect: "manual" });
  }

  /** What isolation the machine running the local runtime offers. */
  detectIsolation(): Promise<IsolationSupport> {
    return this.#call<IsolationSupport>("GET", "/isolation", undefined, CALL_TIMEOUT_MS, "");
  }

  async #call<T>(method: string, path: string, body: unknown, timeoutMs: number, base = `/containers/${encodeURIComponent(this.key)}`, signal?: AbortSignal): Promise<T> {
    const url = `${this.url}${base}${path}`;
    const headers: Record<string, string> = this.#secret === undefined ? {} : { authorization: `Bearer ${this.#secret}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new LocalRuntimeError(unreachableMessage(this.url, error), "CONTAINER_UNAVAILABLE");
    }
    // Not the caller's fault: the Worker and the runtime disagree on the secret.
    if (response.status === 401) {
      await response.body?.cancel();
      throw new LocalRuntimeError(refusedMessage(this.url), "CONTAINER_UNAVAILABLE");
    }
    if (!response.ok) {
      const answer = await readErrorBody(response);
      if (typeof answer === "string") throw new LocalRuntimeError(`local container runtime: ${answer.slice(0, 300)}`);
      throw new LocalRuntimeError(`local container runtime: ${answer.message}`, answer.code);
    }
    return (await response.json()) as T;
  }
}
