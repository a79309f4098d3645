/**
 * A stand-in for `ctx.container` that drives the local container runtime (runtime/) over HTTP on
 * loopback, so the Sandbox Durable Object runs unchanged in wrangler dev and in tests without
 * Docker. It implements what the Container base class uses: `running`, `start`, `monitor`,
 * `destroy`, `signal` and `getTcpPort(port).fetch`.
 *
 * Both ends on loopback answer only to a secret: the runtime to SANDBOX_RUNTIME_SECRET (which
 * `npm start` or the test setup generates and hands to the Worker as a binding), each container
 * server to the secret the runtime gave it, which a start answers with and this stand-in sends along.
 */
import type { ErrorCode } from "../../protocol/errors.ts";
import type { IsolationRequest, IsolationSupport } from "../../protocol/isolation.ts";
import type { AuditPage, AuditQuery } from "../../protocol/network.ts";
import type { RuntimeContainerInfo, RuntimeEgress, RuntimeStartAnswer, RuntimeStartRequest } from "../../protocol/runtime.ts";
import { readErrorBody } from "../rpc/error-response.ts";

const START_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 10_000;
const EXIT_POLL_MS = 30_000;

/** Failures of the local runtime. The message says what to start; `code` is the runtime's wire code, when it gave one. */
export class LocalRuntimeError extends Error {
  override name = "LocalRuntimeError";
  readonly code: ErrorCode | undefined;

  constructor(message: string, code?: ErrorCode) {
    super(message);
    this.code = code;
  }
}

function missingRuntimeMessage(): string {
  return (
    "No container engine: Cloudflare Containers are not enabled here and SANDBOX_CONTAINER_URL is not set. " +
    "Locally, run `npm start` (wrangler dev together with the local container runtime)."
  );
}

function unreachableMessage(url: string, cause: unknown): string {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return (
    `The local container runtime at ${url} is not reachable (${reason}). ` +
    "Start it with `npm start`, or `npm run runtime` beside `wrangler dev`."
  );
}

function refusedMessage(url: string): string {
  return (
    `The local container runtime at ${url} refused this Worker's secret: SANDBOX_RUNTIME_SECRET must be the runtime's ` +
    "(`npm start` hands it over by itself)."
  );
}

interface Run {
  info: Promise<RuntimeStartAnswer>;
  exit: Promise<void>;
}

export class LocalContainer {
  readonly #url: string | undefined;
  readonly #secret: string | undefined;
  readonly #key: string;
  #run: Run | undefined;
  #running = false;
  /** The sandbox's isolation, sent with every start (the Durable Object keeps it current). */
  isolation: IsolationRequest | undefined;
  /** The sandbox's network policy and the secrets it names, sent with every start (the Durable Object keeps it current). */
  egress: RuntimeEgress | undefined;

  constructor(runtimeUrl: string | undefined, key: string, runtimeSecret?: string) {
    this.#url = runtimeUrl?.replace(/\/+$/, "");
    this.#secret = runtimeSecret;
    this.#key = key;
  }

  get running(): boolean {
    return this.#running;
  }

  start(options: { env?: Record<string, string>; entrypoint?: string[]; enableInternet?: boolean } = {}): void {
    if (this.#running) throw new Error("start() cannot be called on a container that is already running.");
    const request: RuntimeStartRequest = {
      ...(options.env ? { env: options.env } : {}),
      ...(options.entrypoint ? { entrypoint: options.entrypoint } : {}),
      enableInternet: options.enableInternet ?? true,
      ...(this.isolation ? { isolation: this.isolation } : {}),
      ...(this.egress ? { egress: this.egress } : {}),
    };
    const info = this.#call<RuntimeStartAnswer>("POST", "/start", request, START_TIMEOUT_MS);
    const run: Run = { info, exit: info.then((started) => this.#watch(started)) };
    this.#run = run;
    this.#running = true;
    const settle = () => {
      if (this.#run === run) this.#running = false;
    };
    run.exit.then(settle, settle);
  }

  /** Settles when the current run ends: resolves on exit code 0, rejects otherwise (as workerd does). */
  monitor(): Promise<void> {
    return this.#run?.exit ?? Promise.resolve();
  }

  /**
   * Asks the runtime even when this object started nothing (it may hold this sandbox's container
   * from an earlier instance of the Durable Object), and fails when the runtime cannot be reached:
   * a sandbox is never reported gone while its processes may still run.
   */
  async destroy(): Promise<void> {
    const run = this.#run;
    await this.#call("DELETE", "", undefined, CALL_TIMEOUT_MS);
    if (!run) return;
    await Promise.race([run.exit.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, CALL_TIMEOUT_MS))]);
    if (this.#run === run) this.#running = false;
  }

  signal(signo: number): void {
    if (!this.#running) return;
    this.#call("POST", "/signal", { signal: signo }, CALL_TIMEOUT_MS).catch((error: unknown) => {
      console.error(`local container ${this.#key}: signal ${signo} failed:`, error);
    });
  }

  getTcpPort(port: number): { fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> } {
    return {
      fetch: async (input, init) => {
        const run = this.#run;
        if (!run || !this.#running) throw new Error("the container is not running, consider calling start()");
        const info = await run.info;
        const target = info.ports?.[String(port)] ?? port;
        const url = new URL(input instanceof Request ? input.url : String(input));
        url.protocol = "http:";
        url.hostname = "127.0.0.1";
        url.port = String(target);
        const authorization = `Bearer ${info.secret}`;
        if (input instanceof Request) {
          const request = new Request(url, input);
          request.headers.set("authorization", authorization);
          return fetch(request);
        }
        // A string URL with init is sent as is (a body re-wrapped in a Request would go out chunked).
        const headers = new Headers(init?.headers);
        headers.set("authorization", authorization);
        return fetch(url, { ...init, headers });
      },
    };
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
    this.egress = egress;
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

  /** What isolation the machine running the local runtime offers. */
  detectIsolation(): Promise<IsolationSupport> {
    return this.#call<IsolationSupport>("GET", "/isolation", undefined, CALL_TIMEOUT_MS, "");
  }

  /** Long-polls the runtime until this run exits. */
  async #watch(started: RuntimeContainerInfo): Promise<void> {
    const query = `?runId=${encodeURIComponent(started.runId ?? "")}&waitMs=${EXIT_POLL_MS}`;
    for (;;) {
      const state = await this.#call<RuntimeContainerInfo>("GET", `/exit${query}`, undefined, EXIT_POLL_MS + CALL_TIMEOUT_MS);
      if (state.running) continue;
      if (state.signal) throw new Error(`runtime signalled the container to exit: ${state.exitCode ?? 0}`);
      if (state.exitCode) throw new Error(`container exited with unexpected exit code: ${state.exitCode}`);
      return;
    }
  }

  async #call<T>(method: string, path: string, body: unknown, timeoutMs: number, base = `/containers/${encodeURIComponent(this.#key)}`, signal?: AbortSignal): Promise<T> {
    if (this.#url === undefined) throw new LocalRuntimeError(missingRuntimeMessage(), "CONTAINER_UNAVAILABLE");
    const url = `${this.#url}${base}${path}`;
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
      throw new LocalRuntimeError(unreachableMessage(this.#url, error), "CONTAINER_UNAVAILABLE");
    }
    // Not the caller's fault: the Worker and the runtime disagree on the secret.
    if (response.status === 401) {
      await response.body?.cancel();
      throw new LocalRuntimeError(refusedMessage(this.#url), "CONTAINER_UNAVAILABLE");
    }
    if (!response.ok) {
      const answer = await readErrorBody(response);
      if (typeof answer === "string") throw new LocalRuntimeError(`local container runtime: ${answer.slice(0, 300)}`);
      // A refusal (bad or unavailable isolation) says all in its message; other failures show the output.
      const refusal = answer.code === "ISOLATION_UNAVAILABLE" || answer.code === "INVALID_REQUEST";
      const tail = refusal ? undefined : answer.context?.logTail;
      const output = typeof tail === "string" && tail !== "" ? `\n--- container output ---\n${tail}` : "";
      throw new LocalRuntimeError(`local container runtime: ${answer.message}${output}`, answer.code);
    }
    return (await response.json()) as T;
  }
}

/**
 * Gives the Durable Object a container when the platform did not: call before `super()` (the
 * Container constructor throws without one). Without SANDBOX_CONTAINER_URL every start fails with
 * a message naming what to run.
 */
export function installLocalContainer(ctx: DurableObjectState<{}>, runtimeUrl: string | undefined, key: string, runtimeSecret?: string): boolean {
  if (ctx.container !== undefined) return false;
  Object.defineProperty(ctx, "container", {
    value: new LocalContainer(runtimeUrl, key, runtimeSecret),
    configurable: true,
    enumerable: true,
  });
  return true;
}
