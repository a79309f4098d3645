/**
 * The Sandbox Durable Object: one per sandbox id, owning one container. It keeps what is its own:
 * the container's lifecycle (start on first use, sleep after `sleepAfter` idle, never while work or a
 * stream keeps it awake), its generation (for stale process handles), its config, and the link to
 * the container every call goes through. Its RPC methods come from their families (methods.ts: the
 * `*-methods.ts` modules), each given the object's shell (shell.ts). Errors leave as RPC exceptions
 * with the wire code encoded (rpc/rpc-errors.ts).
 */
import { Container, type WaitOptions } from "@cloudflare/containers";
import type { BackupQuota } from "../../protocol/backups.ts";
import { errorBody } from "../../protocol/errors.ts";
import { INFO_ROUTES } from "../../protocol/info.ts";
import type { PingResponse } from "../../protocol/process.ts";
import { CONTAINER_SERVER_PORT, ENGINE_SERVER_SECRET_VAR, ENGINE_START_VAR, type EngineStartSettings } from "../../protocol/runtime.ts";
import { isValidSandboxId } from "../../protocol/sandbox.ts";
import { SESSION_ROUTES } from "../../protocol/sessions.ts";
import type { Env } from "../env.ts";
import type { DestroyOptions } from "../rpc/backups.ts";
import type { IsolationRequest } from "../../protocol/isolation.ts";
import { portRequestParts } from "../rpc/ports.ts";
import { fromRpcError, rpcGuard } from "../rpc/rpc-errors.ts";
import type { SandboxConfig, StartupTiming } from "../rpc/sandbox.ts";
import { terminalSocketId } from "../rpc/terminals.ts";
import { Activity } from "./activity.ts";
import { EGRESS_HANDLER, egressOutboundHandler } from "./cloudflare-egress/outbound-handler.ts";
import { networkAllowedBy, PlatformEgress } from "./cloudflare-egress/platform-egress.ts";
import { CONFIG_KEY, envChanges, isolationOf, sameIsolation } from "./config.ts";
import { ContainerApi, type PortFetcher } from "./container-api.ts";
import { writeContainerStateUnconfirmed } from "./container-state-writes.ts";
import { assertSameGeneration, GenerationTracker, stillThere, type Generation } from "./generation.ts";
import { keepAliveSettingsOf } from "./keep-alive.ts";
import { destroySandbox, LIFE_KEY } from "./lifecycle-methods.ts";
import { installMethods } from "./methods.ts";
import { NetworkSettings } from "./network.ts";
import { Persistence } from "./persistence/persistence.ts";
import { servePort } from "./port-methods.ts";
import { PortRegistry } from "./ports.ts";
import { ProcessLedger } from "./process-ledger.ts";
import { pingOf, probeKeepingAnswer, READINESS } from "./readiness.ts";
import { RuntimeChannel } from "./runtime-channel.ts";
import { containerFailure, runtimeCall, startFailure } from "./runtime-errors.ts";
import { RunKeyClaims } from "./run-key-claims.ts";
import type { SandboxObject } from "./sandbox-object.ts";
import { authorized, authorizedPort, serverSecret } from "./server-port.ts";
import type { CallAbout, FamilyMethodName, Link, SandboxShell } from "./shell.ts";
import { SleepCheck } from "./sleep-check.ts";
import { guardStream } from "./stream-guard.ts";

const DEFAULT_SLEEP_AFTER = "10m";

/** The RPC methods methods.ts puts on the prototype, typed as SandboxObject declares them. */
export interface Sandbox extends Pick<SandboxObject, FamilyMethodName> {}

export class Sandbox extends Container<Env> implements SandboxObject {
  static {
    // Through the base class's setter (a static field would hide it): the registry ContainerProxy reads.
    this.outboundHandlers = { [EGRESS_HANDLER]: egressOutboundHandler };
    installMethods(this.prototype, (object) => (object as Sandbox).#shell);
  }
  override defaultPort = CONTAINER_SERVER_PORT;
  /** On Cloudflare, HTTPS is judged like HTTP once a policy is set (cloudflare-egress/). */
  override interceptHttps = true;
  override sleepAfter: string | number = DEFAULT_SLEEP_AFTER;
  readonly #shell: SandboxShell;
  readonly #generations: GenerationTracker;
  readonly #persistence: Persistence;
  readonly #network: NetworkSettings;
  readonly #platformEgress: PlatformEgress;
  readonly #runKeys: RunKeyClaims;
  /** What the processes of the last container did, kept beyond it (process-ledger.ts). */
  readonly #ledger: ProcessLedger;
  /** What keeps the sandbox awake (activity.ts). */
  readonly #activity = new Activity();
  /** Whether it may sleep, and what is kept first (sleep-check.ts). */
  readonly #sleepCheck: SleepCheck;
  /**
   * The sandbox's env vars. Deliberately not `this.envVars` (the container's own process env): that
   * would leave them readable to every command in /proc/1/environ. Commands get them through the
   * container server's env API instead.
   */
  #sandboxEnv: Record<string, string> = {};
  /** The env vars the running container has been given (POST /api/env), and for which generation. */
  #appliedEnv: { generation: string; vars: Record<string, string> } | undefined;
  /** How the last container start this object made went (getInfo()); probes counted by waitForPort. */
  #startup: StartupTiming | undefined;
  #probes = 0;
  /** The ping the readiness probe of a start under way was answered with: its generation, known without asking again. */
  #readyPing: PingResponse | undefined;
  /** What only the local runtime offers (runtime-channel.ts); undefined on Cloudflare. */
  readonly #runtime: RuntimeChannel | undefined;
  /** The secret the container's server answers to (server-port.ts), read before any request is served. */
  #serverSecret = "";
  /** The sandbox's isolation (config), which every start of its container asks the local runtime for. */
  #isolation: IsolationRequest = {};
  /** Limits on this sandbox's snapshots (config backupQuota). */
  #backupQuota: BackupQuota = {};

  constructor(ctx: DurableObjectState<{}>, env: Env) {
    super(ctx, env);
    writeContainerStateUnconfirmed(this, ctx.storage);
    // The local runtime knows the sandbox by its id where that is a valid key (its folder is named so), else by the object's id.
    const name = ctx.id.name;
    const key = name !== undefined && isValidSandboxId(name) ? name : ctx.id.toString();
    this.#runtime = env.SANDBOX_CONTAINER_URL ? new RuntimeChannel(env.SANDBOX_CONTAINER_URL, key, env.SANDBOX_RUNTIME_SECRET) : undefined;
    this.#persistence = new Persistence(ctx.storage, env, key);
    this.#generations = new GenerationTracker(ctx.storage);
    this.#ledger = new ProcessLedger(ctx.storage);
    this.#runKeys = new RunKeyClaims(ctx.storage.sql);
    this.#network = new NetworkSettings(ctx.storage);
    this.#platformEgress = new PlatformEgress(ctx.storage, this.#network, networkAllowedBy(env.SANDBOX_NETWORK_ALLOWED), this.#runtime);
    const sandboxId = ctx.id.name ?? ctx.id.toString();
    this.#sleepCheck = new SleepCheck({
      sandboxId, activity: this.#activity, ledger: this.#ledger, persistence: this.#persistence,
      running: () => this.ctx.container?.running === true, api: () => this.#api(),
    });
    this.#shell = {
      object: this,
      ctx,
      env,
      sandboxId,
      call: (work, about) => this.#call(work, about),
      guard: rpcGuard,
      link: () => this.#link(),
      keepingAwake: (work) => this.#keepingAwake(work),
      guardStream: (body, containerGone) => this.#guardStream(body, containerGone),
      guardEvents: (body, link) => this.#guardEvents(body, link),
      noteActivity: () => this.#noteActivity(),
      // The parts the object keeps, which the families use as they are.
      generations: this.#generations, ledger: this.#ledger, runKeys: this.#runKeys, persistence: this.#persistence,
      network: this.#network, platformEgress: this.#platformEgress, ports: new PortRegistry(ctx.storage),
      runtime: this.#runtime,
      serverPort: () => this.#serverPort(),
      updateConfig: (change) => this.#updateConfig(change),
      backupQuota: () => this.#backupQuota,
      destroyContainer: () => this.#destroyContainer(),
      keepAliveReading: (report, asking) => this.#sleepCheck.reading(this.sleepAfter, report, asking),
      startup: () => this.#startup,
    };
    this.sleepAfter = env.SANDBOX_SLEEP_AFTER || DEFAULT_SLEEP_AFTER;
    void ctx.blockConcurrencyWhile(async () => {
      const config = await ctx.storage.get<SandboxConfig>(CONFIG_KEY);
      if (config) this.#apply(config);
      this.#serverSecret = await serverSecret(ctx.storage);
      if (!this.#runtime) this.enableInternet = this.#platformEgress.internetFor(await this.#network.policy());
    });
  }

  // ── lifecycle ────────────────────────────────────────────────────────────

  override onStart(): void {
    this.#generations.reset(this.#readyPing);
    this.#readyPing = undefined;
    // Kept as before, but the requests that follow (the readiness probe, the first command) need not wait for its commit.
    void this.ctx.storage.put(LIFE_KEY, "started", { allowUnconfirmed: true });
    this.#activity.containerStartedAt = Date.now();
    if (!this.#runtime) void this.#platformEgress.started(this.enableInternet);
  }

  override onStop(): void {
    this.#generations.reset();
    this.#activity.containerStartedAt = undefined;
  }

  /**
   * Probes sooner and with growing deadlines instead of the package's fixed 300 ms / 5 s (readiness.ts).
   * The server's port is probed with its ping, whose answer names the container's generation, which
   * the first call would otherwise ask for right after (onStart hands it to the tracker).
   */
  override async waitForPort(options: WaitOptions): Promise<number> {
    const container = this.ctx.container!;
    const server = options.portToCheck === CONTAINER_SERVER_PORT;
    const port = server ? this.#serverPort() : container.getTcpPort(options.portToCheck);
    const ready = await probeKeepingAnswer(port, options, () => container.running, `http://${this.pingEndpoint}${server ? INFO_ROUTES.ping : ""}`);
    this.#probes += ready.probes;
    // The server's ping names the new container's generation: the first call need not ask again (onStart).
    if (server) this.#readyPing = await pingOf(ready.answer);
    return ready.probes;
  }

  override onError(error: unknown): unknown {
    console.error(`sandbox ${this.#shell.sandboxId}: container error:`, error instanceof Error ? error.message : error);
    throw error;
  }

  /**
   * Sleep only when nothing keeps the sandbox awake (keep-alive.ts): an open stream, or work in the
   * container — unless a ceiling (maxIdle, maxLifetime) says otherwise. A durable workspace is saved
   * first; a failed save keeps the container awake to try again at the next expiry, and a call that
   * came in while saving means the sandbox is in use again.
   */
  override async onActivityExpired(): Promise<void> {
    const { verdict } = await this.#sleepCheck.reading(this.sleepAfter);
    // Kept at every expiry: at a sleep it is what the processes did; while work goes on, what survives a crash.
    await this.#sleepCheck.keepLedger();
    if (!verdict.sleep) {
      this.#activity.nextCheckAt = verdict.checkAt;
      this.renewActivityTimeout();
      return;
    }
    this.#activity.nextCheckAt = undefined;
    if (await this.#sleepCheck.readyToSleep()) await super.onActivityExpired();
    else this.renewActivityTimeout();
  }

  /**
   * The activity timeout runs to the next moment the sandbox may sleep: sleepAfter from now, but no
   * later than the end of its lifetime, nor than the next look that work asked for.
   */
  override renewActivityTimeout(): void {
    super.renewActivityTimeout();
    // The base class keeps the deadline in a field its types call private; the package is pinned to an exact version.
    const timeout = this as unknown as { sleepAfterMs: number };
    timeout.sleepAfterMs = Math.min(timeout.sleepAfterMs, this.#activity.deadline());
  }

  /** The lifecycle family's destroy (lifecycle-methods.ts), written here because it overrides the base class's. */
  override async destroy(options?: DestroyOptions): Promise<void> {
    return destroySandbox(this.#shell, options);
  }

  async #destroyContainer(): Promise<void> {
    try {
      await super.destroy();
    } catch (error) {
      throw containerFailure(error, "destroyed", this.#engineName());
    } finally {
      this.#generations.reset();
    }
  }

  // ── config ───────────────────────────────────────────────────────────────

  async #updateConfig(change: (stored: SandboxConfig) => SandboxConfig): Promise<void> {
    const stored = (await this.ctx.storage.get<SandboxConfig>(CONFIG_KEY)) ?? {};
    const next = change(stored);
    // New walls are checked against the operator's before they are kept (the runtime decides).
    if (!sameIsolation(stored, next)) await runtimeCall(async () => this.#runtime?.checkIsolation(isolationOf(next)));
    this.#apply(next);
    await this.ctx.storage.put(CONFIG_KEY, next);
    // Durable workspace turned on while the container runs: what it holds now is kept, not an older save.
    if (!stored.persistence && next.persistence && this.ctx.container?.running) await this.#persistence.adopt(await this.#api().instanceId());
    // New walls need a new container: never leave one running with other walls than asked for.
    if (!sameIsolation(stored, next) && this.#runtime && this.ctx.container?.running) await this.#destroyContainer();
  }

  #apply(config: SandboxConfig): void {
    if (config.sleepAfter !== undefined) {
      this.sleepAfter = config.sleepAfter;
      this.renewActivityTimeout();
    }
    if (config.envVars !== undefined) this.#sandboxEnv = { ...config.envVars };
    const wasKeptAlive = this.#activity.ceilings.keepAlive;
    this.#activity.ceilings = keepAliveSettingsOf(config);
    // Turned off: idle time counts from now, as sleepAfter from a call would.
    if (wasKeptAlive && !this.#activity.ceilings.keepAlive) this.renewActivityTimeout();
    this.#backupQuota = config.backupQuota ?? {};
    this.#persistence.configure(config.persistence);
    this.#isolation = isolationOf(config);
  }

  /**
   * The container's environment at each start: the server's secret, and locally what the sandbox
   * asks of the runtime (its key, isolation and network policy with its secrets), which the engine
   * takes out of the environment. On Cloudflare the policy's secrets never enter the container.
   */
  async #startEnv(): Promise<Record<string, string>> {
    const env: Record<string, string> = { [ENGINE_SERVER_SECRET_VAR]: this.#serverSecret };
    if (this.#runtime) {
      const settings: EngineStartSettings = { key: this.#runtime.key, isolation: this.#isolation, egress: await this.#network.runtimeEgress() };
      env[ENGINE_START_VAR] = JSON.stringify(settings);
    }
    return env;
  }

  /** Where the container engine is, for a message about one not answering. */
  #engineName(): string {
    return this.#runtime ? `${this.#runtime.url} (its Docker engine)` : "this Worker's container engine";
  }

  // ── requests that are not RPC ────────────────────────────────────────────

  /** A viewer's upgrade (see terminalSocketRequest) and preview-port requests are served here; anything else goes to the container as the base class does. */
  override async fetch(request: Request): Promise<Response> {
    const portParts = portRequestParts(request);
    if (portParts) return servePort(this.#shell, portParts, request);
    const terminalId = terminalSocketId(request);
    try {
      if (terminalId !== undefined) return await this.connectTerminal(terminalId, request);
      // Anything else goes to the container's server as the base class sends it, started as every call starts it.
      await this.#ensureRunning();
      return await super.fetch(authorized(request, this.#serverSecret));
    } catch (error) {
      const coded = fromRpcError(error);
      return Response.json(errorBody(coded.code, coded.message, coded.context), { status: coded.httpStatus });
    }
  }

  // ── the link to the container ────────────────────────────────────────────

  /**
   * Runs one RPC call against the running container; a handle's generation is checked first. The
   * call is activity while it is in flight (a start, a long command, an upload), so the container
   * never sleeps under it; a stream it returns counts on as long as it is open. A run named by an
   * idempotency key is noted against this container before it is sent (run-key-claims.ts).
   */
  async #call<T>(work: (link: Link) => Promise<T>, about?: CallAbout): Promise<T> {
    return rpcGuard(() =>
      this.#keepingAwake(async () => {
        const link = await this.#link();
        if (about && "key" in about) this.#runKeys.claim(about.key, link.generation);
        else if (about) assertSameGeneration(about.ref, link.generation, about.processId);
        return work(link);
      }),
    );
  }

  #api(): ContainerApi {
    return new ContainerApi(this.#serverPort());
  }

  /** The container server's port, every request carrying its secret. */
  #serverPort(): PortFetcher {
    return authorizedPort(this.ctx.container!.getTcpPort(CONTAINER_SERVER_PORT), this.#serverSecret);
  }

  #noteActivity(): void {
    this.#activity.called();
    this.renewActivityTimeout();
  }

  async #link(): Promise<Link> {
    this.#noteActivity();
    await this.#ensureRunning();
    const api = this.#api();
    const generation = await this.#generations.current(() => api.json<PingResponse>("GET", INFO_ROUTES.ping));
    await this.#applyEnv(api, generation);
    // A durable workspace is back before the first command of a new container sees it.
    await this.#persistence.restoreOnce(api, generation.instanceId);
    return { api, generation };
  }

  /**
   * Gives the container the sandbox's env vars through its env API — once per container, and again
   * when configure() or setEnvVars() changes them.
   */
  async #applyEnv(api: ContainerApi, generation: Generation): Promise<void> {
    const wanted = this.#sandboxEnv;
    const vars = envChanges(this.#appliedEnv?.generation === generation.instanceId ? this.#appliedEnv.vars : {}, wanted);
    if (Object.keys(vars).length > 0) await api.json("POST", SESSION_ROUTES.env, { vars });
    this.#appliedEnv = { generation: generation.instanceId, vars: { ...wanted } };
  }

  async #ensureRunning(): Promise<void> {
    const state = await this.getState();
    if (this.ctx.container!.running && state.status === "healthy") return;
    const startedAt = Date.now();
    this.#probes = 0;
    this.#readyPing = undefined;
    try {
      this.envVars = await this.#startEnv();
      await this.startAndWaitForPorts({
        ports: [CONTAINER_SERVER_PORT],
        cancellationOptions: { portReadyTimeoutMS: READINESS.portReadyTimeoutMs, waitInterval: READINESS.pollIntervalMs },
      });
      this.#startup = { startedAt: new Date(startedAt).toISOString(), readyMs: Date.now() - startedAt, probes: this.#probes };
    } catch (error) {
      // The runtime refused the start for a reason of its own (e.g. ISOLATION_UNAVAILABLE): its code is kept.
      throw await startFailure(error, this.#runtime, this.#engineName());
    }
  }

  // ── keeping awake ────────────────────────────────────────────────────────

  /** Work the container must stay awake for: counted as an open stream while it runs. */
  async #keepingAwake<T>(work: () => Promise<T>): Promise<T> {
    this.#activity.openStreams++;
    try {
      return await work();
    } finally {
      this.#streamClosed();
    }
  }

  #streamClosed(): void {
    this.#activity.streamClosed();
    this.renewActivityTimeout();
  }

  #guardStream(body: ReadableStream<Uint8Array>, containerGone?: () => Promise<boolean>): ReadableStream<Uint8Array> {
    return guardStream(body, { onOpen: () => this.#activity.openStreams++, onClose: () => this.#streamClosed(), ...(containerGone ? { containerGone } : {}) });
  }

  /** An event stream, which ends with a coded error event when its container goes away under it. */
  #guardEvents(body: ReadableStream<Uint8Array>, { api, generation }: Link): ReadableStream<Uint8Array> {
    return this.#guardStream(body, async () => !this.ctx.container?.running || !(await stillThere(() => api.json<PingResponse>("GET", INFO_ROUTES.ping), generation)));
  }
}
