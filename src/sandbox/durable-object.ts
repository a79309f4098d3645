/**
 * The Sandbox Durable Object: one per sandbox id, owning one container. It keeps the container's
 * lifecycle (start on first use, sleep after `sleepAfter` idle, never while a stream is open), its
 * generation (for stale process handles) and its config, and forwards every call to the container
 * process server. Errors leave as RPC exceptions with the wire code encoded (rpc/rpc-errors.ts).
 */
import { Container, type WaitOptions } from "@cloudflare/containers";
import type { CodeContext, Execution } from "../../protocol/code.ts";
import type { ExecResult, PingResponse } from "../../protocol/process.ts";
import { INFO_ROUTES, type InfoResponse, type InstructionsResponse } from "../../protocol/info.ts";
import type { IsolationSupport } from "../../protocol/isolation.ts";
import { CONTAINER_SERVER_PORT } from "../../protocol/runtime.ts";
import { isValidSandboxId } from "../../protocol/sandbox.ts";
import { SESSION_ROUTES, type SessionInfo } from "../../protocol/sessions.ts";
import { ContainerUnavailableError, errorFromCode, InvalidRequestError, ProcessNotFoundError, SandboxError } from "../rpc/errors.ts";
import type {
  DeleteFileOptions,
  DeleteFileResult,
  ExistsResult,
  FileContent,
  FileListing,
  FileStream,
  ListFilesOptions,
  MkdirOptions,
  MkdirResult,
  MoveFileResult,
  MoveOptions,
  ReadFileOptions,
  RenameFileResult,
  WriteFileOptions,
  WriteFileResult,
  WriteStreamOptions,
} from "../rpc/files.ts";
import type {
  ExecRequestOptions,
  HandleRef,
  KillAllRequest,
  KillResult,
  ListRequest,
  ProcessLogs,
  ProcessRecord,
  StartRequestOptions,
  StdinOptions,
  StdinResult,
  StreamResumeRequest,
} from "../rpc/processes.ts";
import type { GitCheckoutOptions, GitCheckoutResult } from "../rpc/git.ts";
import type { ChangesOptions, ChangesResult, WatchOptions } from "../rpc/watch.ts";
import type { CodeContextOptions, DeleteCodeContextResult, InterruptCodeResult, RunCodeRequestOptions } from "../rpc/code.ts";
import { fromRpcError, toRpcError } from "../rpc/rpc-errors.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import { errorFromResponse } from "../rpc/error-response.ts";
import { terminalSocketId, type TerminalIdResult, type TerminalInfo, type TerminalKillResult, type TerminalOptions, type TerminalOutput, type TerminalOutputOptions, type TerminalWriteResult } from "../rpc/terminals.ts";
import { errorBody } from "../../protocol/errors.ts";
import type { SandboxConfig, SandboxDetails, SandboxInfo, SandboxStatus, StartupTiming } from "../rpc/sandbox.ts";
import type { BackupInfo, CreateBackupOptions, DeleteBackupResult, DestroyOptions, ExportArchiveOptions, ForkOptions, ImportArchiveOptions, ImportArchiveResult, ListBackupsOptions, RestoreBackupOptions, RestoreBackupResult } from "../rpc/backups.ts";
import { createBackupRequestSchema, listBackupsQuerySchema, restoreBackupRequestSchema, type BackupQuota, type PersistenceStatus } from "../../protocol/backups.ts";
import { createArchiveRequestSchema, importArchiveOptionsSchema } from "../../protocol/archive.ts";
import { extractOver, extractReplacing, openArchive } from "./persistence/archive-io.ts";
import { forkRequestSchema, type ForkResult } from "../../protocol/fork.ts";
import { Persistence } from "./persistence/persistence.ts";
import type { CreateSessionOptions, DeleteSessionResult, EnvVarsUpdate, SetEnvOptions } from "../rpc/sessions.ts";
import type { Env } from "../env.ts";
import { CONFIG_KEY, envChanges, isolationOf, PLATFORM_ISOLATION, sameIsolation, updatedEnv } from "./config.ts";
import { sandboxConfigSchema, sleepAfterSeconds } from "../../protocol/sandbox-config.ts";
import * as code from "./code.ts";
import { ContainerApi } from "./container-api.ts";
import * as files from "./files.ts";
import * as git from "./git.ts";
import * as watching from "./watch.ts";
import { assertSameGeneration, GenerationTracker, stillThere, type Generation } from "./generation.ts";
import { installLocalContainer, LocalContainer, LocalRuntimeError } from "./local-container.ts";
import * as processes from "./processes.ts";
import { parseRequest } from "./request.ts";
import { NetworkSettings } from "./network.ts";
import { auditEventStream } from "./network-audit-stream.ts";
import { networkAllowedBy, PlatformEgress } from "./cloudflare-egress/platform-egress.ts";
import { EGRESS_HANDLER, egressOutboundHandler } from "./cloudflare-egress/outbound-handler.ts";
import type { EgressJudgement, EgressRequest } from "./cloudflare-egress/judge.ts";
import type { AuditRecord } from "./cloudflare-egress/audit-ring.ts";
import {
  auditQuerySchema,
  auditResumeSchema,
  networkPolicySchema,
  secretNameSchema,
  setSecretRequestSchema,
  type AuditPage,
  type AuditQuery,
  type AuditResume,
  type NetworkPolicyInput,
  type NetworkPolicyState,
  type SecretInfo,
} from "../../protocol/network.ts";
import type { DeleteSecretResult } from "../rpc/network.ts";
import * as sessions from "./sessions.ts";
import * as terminals from "./terminals.ts";
import { forwardToPort, PortRegistry, staleUrl, type UrlContext } from "./ports.ts";
import { guardedPortResponse } from "./port-guards.ts";
import { previewSettings } from "../rpc/preview-urls.ts";
import { portRequestParts, serviceOrigin, type ExposedPort, type ExposedPortsOptions, type ExposePortOptions, type PortRequestParts, type UnexposePortResult } from "../rpc/ports.ts";
import { asSandboxError } from "../rpc/errors.ts";
import { guardStream } from "./stream-guard.ts";
import { probeUntilReady, READINESS } from "./readiness.ts";
import { keptLogs, keptLogStream, keptRecord, ProcessLedger, type LedgerEntry } from "./process-ledger.ts";
import { RunKeyClaims } from "./run-key-claims.ts";
import { decide, DEFAULT_KEEP_ALIVE, keepAliveSettingsOf, keepAliveStatus, type KeepAliveFacts, type KeepAliveSettings } from "./keep-alive.ts";

const DEFAULT_SLEEP_AFTER = "10m";

/** "started" once a container ran, "destroyed" after destroy(): whether a sandbox that is not running is asleep or gone. */
const LIFE_KEY = "lifecycle:last";

interface Link {
  api: ContainerApi;
  generation: Generation;
}

export class Sandbox extends Container<Env> implements SandboxRpc {
  static {
    // Through the base class's setter (a static field would hide it): the registry ContainerProxy reads.
    this.outboundHandlers = { [EGRESS_HANDLER]: egressOutboundHandler };
  }
  override defaultPort = CONTAINER_SERVER_PORT;
  /** On Cloudflare, HTTPS is judged like HTTP once a policy is set (cloudflare-egress/). */
  override interceptHttps = true;
  override sleepAfter: string | number = DEFAULT_SLEEP_AFTER;
  readonly #generations: GenerationTracker;
  /** Exposed preview ports and their tokens (in storage). */
  readonly #ports: PortRegistry;
  #openStreams = 0;
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
  /** The durable workspace and snapshots (src/sandbox/persistence/). */
  readonly #persistence: Persistence;
  /** What the processes of the last container did, kept beyond it (process-ledger.ts). */
  readonly #ledger: ProcessLedger;
  readonly #runKeys: RunKeyClaims;
  /** Counts calls that reached the container: a sleep that sees it change while saving was interrupted by work. */
  #calls = 0;
  /** The network policy and its secrets (in storage). */
  readonly #network: NetworkSettings;
  /** Where no local runtime's proxy stands in front of the container: the platform's interception (cloudflare-egress/). */
  readonly #platformEgress: PlatformEgress;
  /** The ceilings on staying awake for work (keep-alive.ts), from the config. */
  #keepAlive: Omit<KeepAliveSettings, "sleepAfter"> = { ...DEFAULT_KEEP_ALIVE };
  /** The last call, or the end of the last open stream. */
  #lastActivityAt = Date.now();
  /** When the running container started, once known (its start here, or its uptime in a report). */
  #containerStartedAt: number | undefined;
  /** Limits on this sandbox's snapshots (config backupQuota). */
  #backupQuota: BackupQuota = {};
  /** Set when work kept the sandbox awake at an expiry: when to look again. A call clears it. */
  #nextCheckAt: number | undefined;

  constructor(ctx: DurableObjectState<{}>, env: Env) {
    // Locally there is no ctx.container; the stand-in must exist before the Container constructor runs.
    const name = ctx.id.name;
    const key = name !== undefined && isValidSandboxId(name) ? name : ctx.id.toString();
    installLocalContainer(ctx, env.SANDBOX_CONTAINER_URL, key, env.SANDBOX_RUNTIME_SECRET);
    super(ctx, env);
    this.#persistence = new Persistence(ctx.storage, env, key);
    this.#generations = new GenerationTracker(ctx.storage);
    this.#ledger = new ProcessLedger(ctx.storage);
    this.#runKeys = new RunKeyClaims(ctx.storage.sql);
    this.#ports = new PortRegistry(ctx.storage);
    this.#network = new NetworkSettings(ctx.storage);
    this.#platformEgress = new PlatformEgress(ctx.storage, this.#network, networkAllowedBy(env.SANDBOX_NETWORK_ALLOWED));
    this.sleepAfter = env.SANDBOX_SLEEP_AFTER || DEFAULT_SLEEP_AFTER;
    void ctx.blockConcurrencyWhile(async () => {
      const config = await ctx.storage.get<SandboxConfig>(CONFIG_KEY);
      if (config) this.#apply(config);
      const local = this.#localContainer();
      if (local) local.egress = await this.#network.runtimeEgress();
      else this.enableInternet = this.#platformEgress.internetFor(await this.#network.policy());
    });
  }

  // ── lifecycle ────────────────────────────────────────────────────────────

  override onStart(): void {
    this.#generations.reset();
    void this.ctx.storage.put(LIFE_KEY, "started");
    this.#containerStartedAt = Date.now();
    if (!this.#localContainer()) void this.#platformEgress.started(this.enableInternet);
  }

  override onStop(): void {
    this.#generations.reset();
    this.#containerStartedAt = undefined;
  }

  /** Probes sooner and with growing deadlines instead of the package's fixed 300 ms / 5 s (readiness.ts). */
  override async waitForPort(options: WaitOptions): Promise<number> {
    const container = this.ctx.container!;
    const probes = await probeUntilReady(container.getTcpPort(options.portToCheck), options, () => container.running, `http://${this.pingEndpoint}`);
    this.#probes += probes;
    return probes;
  }

  override onError(error: unknown): unknown {
    console.error(`sandbox ${this.ctx.id.name ?? this.ctx.id.toString()}: container error:`, error instanceof Error ? error.message : error);
    throw error;
  }

  /**
   * Sleep only when nothing keeps the sandbox awake (keep-alive.ts): an open stream, or work in the
   * container — unless a ceiling (maxIdle, maxLifetime) says otherwise. A durable workspace is saved
   * first; a failed save keeps the container awake to try again at the next expiry, and a call that
   * came in while saving means the sandbox is in use again.
   */
  override async onActivityExpired(): Promise<void> {
    const { verdict } = await this.#keepAliveVerdict();
    // Kept at every expiry: at a sleep it is what the processes did; while work goes on, what survives a crash.
    await this.#keepLedger();
    if (!verdict.sleep) {
      this.#nextCheckAt = verdict.checkAt;
      this.renewActivityTimeout();
      return;
    }
    this.#nextCheckAt = undefined;
    if (this.ctx.container?.running && this.#persistence.enabled) {
      const calls = this.#calls;
      const saved = await this.#saveBeforeSleep();
      if (!saved || this.#calls !== calls) {
        this.renewActivityTimeout();
        return;
      }
    }
    await super.onActivityExpired();
  }

  /** Durable workspace turned on while the container runs: what it holds now is kept, not an older save. */
  async #adoptRunningWorkspace(): Promise<void> {
    const api = new ContainerApi(this.ctx.container!.getTcpPort(CONTAINER_SERVER_PORT));
    const { instanceId } = await api.json<PingResponse>("GET", INFO_ROUTES.ping);
    await this.#persistence.adopt(instanceId);
  }

  /**
   * The activity timeout runs to the next moment the sandbox may sleep: sleepAfter from now, but no
   * later than the end of its lifetime, nor than the next look that work asked for.
   */
  override renewActivityTimeout(): void {
    super.renewActivityTimeout();
    const lifetime = this.#keepAlive?.maxLifetime;
    const lifetimeEnd = lifetime === undefined || this.#containerStartedAt === undefined ? Infinity : this.#containerStartedAt + sleepAfterSeconds(lifetime) * 1000;
    // The base class keeps the deadline in a field its types call private; the package is pinned to an exact version.
    const timeout = this as unknown as { sleepAfterMs: number };
    timeout.sleepAfterMs = Math.min(timeout.sleepAfterMs, lifetimeEnd, this.#nextCheckAt ?? Infinity);
  }

  /**
   * Whether the sandbox sleeps now, from its streams and calls and what its container reports.
   * `asking`: calls in flight that are only asking (getInfo's own), which are not work.
   */
  async #keepAliveVerdict(
    report?: Pick<InfoResponse, "activity" | "uptimeMs">,
    asking = 0,
  ): Promise<{ settings: KeepAliveSettings; facts: KeepAliveFacts; verdict: ReturnType<typeof decide> }> {
    const now = Date.now();
    let answered = report;
    if (!answered && this.ctx.container?.running) {
      try {
        answered = await new ContainerApi(this.ctx.container.getTcpPort(CONTAINER_SERVER_PORT)).json<InfoResponse>("GET", INFO_ROUTES.info);
      } catch {
        // Not answering: no work of it is known, and keeping it awake keeps nothing.
      }
    }
    if (answered) this.#containerStartedAt ??= now - answered.uptimeMs;
    const settings: KeepAliveSettings = { sleepAfter: this.sleepAfter, ...this.#keepAlive };
    const facts: KeepAliveFacts = {
      now,
      openStreams: this.#openStreams - asking,
      lastActivityAt: this.#lastActivityAt,
      containerStartedAt: this.#containerStartedAt,
      work: answered?.activity.work,
      workIdleMs: answered?.activity.workIdleMs ?? Number.POSITIVE_INFINITY,
    };
    return { settings, facts, verdict: decide(settings, facts) };
  }

  /** Keeps what the running container's processes did (best effort: a container not answering has nothing to give). */
  async #keepLedger(): Promise<void> {
    if (!this.ctx.container?.running) return;
    try {
      const api = new ContainerApi(this.ctx.container.getTcpPort(CONTAINER_SERVER_PORT));
      const { instanceId } = await api.json<PingResponse>("GET", INFO_ROUTES.ping);
      await this.#ledger.keep(api, instanceId);
    } catch (error) {
      console.error(`sandbox ${this.ctx.id.name ?? this.ctx.id.toString()}: keeping the process logs failed:`, error instanceof Error ? error.message : error);
    }
  }

  async #saveBeforeSleep(): Promise<boolean> {
    try {
      const api = new ContainerApi(this.ctx.container!.getTcpPort(CONTAINER_SERVER_PORT));
      const { instanceId } = await api.json<PingResponse>("GET", INFO_ROUTES.ping);
      return await this.#persistence.saveBeforeSleep(api, instanceId);
    } catch {
      // The container is not answering: nothing of it can be saved, and keeping it awake saves nothing either.
      return true;
    }
  }

  async configure(config: SandboxConfig): Promise<void> {
    return this.#guard(async () => {
      const valid = parseRequest(sandboxConfigSchema, config, "sandbox config");
      // A field given as undefined keeps its stored value (`{isolation: opts.isolation}` must not reset it).
      const given = Object.fromEntries(Object.entries(valid).filter(([, value]) => value !== undefined));
      await this.#updateConfig((stored) => ({ ...stored, ...given }));
    });
  }

  /** Sandbox-level vars join the kept config (so a restarted container gets them too); a session's go to the container. */
  async setEnvVars(vars: EnvVarsUpdate, options: SetEnvOptions = {}): Promise<void> {
    const { sessionId } = options;
    if (sessionId !== undefined) return this.#call(({ api }) => sessions.setSessionEnv(api, sessionId, sessions.envUpdate(vars)));
    return this.#guard(async () => {
      const update = sessions.envUpdate(vars);
      await this.#updateConfig((stored) => ({ ...stored, envVars: updatedEnv(stored.envVars, update) }));
      if (this.ctx.container?.running) await this.#link();
    });
  }

  async #updateConfig(change: (stored: SandboxConfig) => SandboxConfig): Promise<void> {
    const stored = (await this.ctx.storage.get<SandboxConfig>(CONFIG_KEY)) ?? {};
    const next = change(stored);
    // New walls are checked against the operator's before they are kept (the runtime decides).
    if (!sameIsolation(stored, next)) await this.#checkIsolation(next);
    this.#apply(next);
    await this.ctx.storage.put(CONFIG_KEY, next);
    if (!stored.persistence && next.persistence && this.ctx.container?.running) await this.#adoptRunningWorkspace();
    // New walls need a new container: never leave one running with other walls than asked for.
    if (!sameIsolation(stored, next) && this.#localContainer()?.running) await this.#destroyContainer();
  }

  #apply(config: SandboxConfig): void {
    if (config.sleepAfter !== undefined) {
      this.sleepAfter = config.sleepAfter;
      this.renewActivityTimeout();
    }
    if (config.envVars !== undefined) this.#sandboxEnv = { ...config.envVars };
    const wasKeptAlive = this.#keepAlive.keepAlive;
    this.#keepAlive = keepAliveSettingsOf(config);
    // Turned off: idle time counts from now, as sleepAfter from a call would.
    if (wasKeptAlive && !this.#keepAlive.keepAlive) this.renewActivityTimeout();
    this.#backupQuota = config.backupQuota ?? {};
    this.#persistence.configure(config.persistence);
    const local = this.#localContainer();
    if (local) local.isolation = isolationOf(config);
  }

  async #checkIsolation(config: SandboxConfig): Promise<void> {
    try {
      await this.#localContainer()?.checkIsolation(isolationOf(config));
    } catch (error) {
      throw error instanceof LocalRuntimeError && error.code !== undefined ? errorFromCode(error.code, error.message, { cause: error }) : error;
    }
  }

  /** The stand-in container of the local runtime (undefined on Cloudflare, where isolation is the container). */
  #localContainer(): LocalContainer | undefined {
    const container = this.ctx.container as unknown;
    return container instanceof LocalContainer ? container : undefined;
  }

  /**
   * Stops the container now (SIGKILL to everything in it); the next call starts a new generation.
   * `keep: true` saves the durable workspace first (and destroys nothing when that fails); without
   * it the durable workspace is forgotten.
   */
  override async destroy(options: DestroyOptions = {}): Promise<void> {
    return this.#guard(async () => {
      if (options.keep === true) {
        this.#persistence.assertEnabled();
        if (this.ctx.container?.running) {
          const { api, generation } = await this.#link();
          await this.#persistence.save(api, generation.instanceId);
        }
      } else {
        await this.#persistence.discard();
      }
      // Every preview token dies before the container does: from here its URLs answer 404.
      await this.#ports.revokeAll();
      await this.#ledger.forget();
      this.#runKeys.forget();
      await this.#destroyContainer();
      await this.ctx.storage.put(LIFE_KEY, "destroyed");
    });
  }

  async #destroyContainer(): Promise<void> {
    try {
      await super.destroy();
    } catch (error) {
      if (!(error instanceof LocalRuntimeError)) throw error;
      throw errorFromCode(error.code ?? "CONTAINER_UNAVAILABLE", `The sandbox's container could not be destroyed: ${error.message}`, { cause: error });
    } finally {
      this.#generations.reset();
    }
  }

  async info(): Promise<SandboxInfo> {
    return this.#call(async ({ generation }) => this.#describe(generation));
  }

  async status(): Promise<SandboxStatus> {
    return this.#guard(async () => {
      const running = this.ctx.container?.running === true;
      return { running, asleep: !running && (await this.ctx.storage.get(LIFE_KEY)) === "started" };
    });
  }

  /** info() plus what the container server reports: status, resources, isolation in effect. */
  async getInfo(): Promise<SandboxDetails> {
    return this.#call(async ({ api, generation }) => {
      const { instanceId: _id, ...report } = await api.record<InfoResponse>("GET", INFO_ROUTES.info);
      const { settings, facts, verdict } = await this.#keepAliveVerdict(report, 1);
      return {
        ...this.#describe(generation),
        ...report,
        ...(this.#startup ? { startup: this.#startup } : {}),
        persistence: await this.#persistenceReport(),
        keepAlive: keepAliveStatus(settings, facts, verdict),
      };
    });
  }

  /** The durable workspace's status, with what the sandbox's snapshots hold where the bucket is bound. */
  async #persistenceReport(): Promise<PersistenceStatus> {
    const status = await this.#persistence.status();
    try {
      const usage = await this.#persistence.backups().usage();
      const quota = Object.keys(this.#backupQuota).length > 0 ? { quota: this.#backupQuota } : {};
      return { ...status, backups: { ...usage, ...quota } };
    } catch {
      return status;
    }
  }

  #describe(generation: Generation): SandboxInfo {
    const { instanceId, number, startedAt } = generation;
    return { generation: instanceId, generationNumber: number, containerStartedAt: startedAt, sleepAfter: String(this.sleepAfter) };
  }

  /** A few lines describing the sandbox, for an agent's tool prompt. */
  async getInstructions(): Promise<string> {
    return this.#call(async ({ api }) => (await api.json<InstructionsResponse>("GET", INFO_ROUTES.instructions)).instructions);
  }

  async detectIsolation(): Promise<IsolationSupport> {
    return this.#guard(async () => (await this.#localContainer()?.detectIsolation()) ?? PLATFORM_ISOLATION);
  }

  // ── commands and processes ───────────────────────────────────────────────

  async exec(command: string, options: ExecRequestOptions = {}): Promise<ExecResult> {
    return this.#call(({ api }) => processes.exec(api, command, options), { key: options.idempotencyKey });
  }

  async execStream(command: string, options: ExecRequestOptions = {}): Promise<ReadableStream<Uint8Array>> {
    return this.#call(async (link) => this.#guardEvents(await processes.execStream(link.api, command, options), link), { key: options.idempotencyKey });
  }

  /** A broken execStream picks up here, from its last event id. */
  async resumeExecStream(id: string, options: StreamResumeRequest = {}): Promise<ReadableStream<Uint8Array>> {
    return this.#call(async (link) => this.#guardEvents(await processes.resumeExecStream(link.api, id, options), link), { ref: options, processId: id });
  }

  async startProcess(command: string, options: StartRequestOptions = {}): Promise<ProcessRecord> {
    return this.#call(({ api, generation }) => processes.startProcess(api, generation, command, options), { key: options.idempotencyKey });
  }

  async listProcesses(options: ListRequest = {}): Promise<ProcessRecord[]> {
    return this.#call(({ api, generation }) => processes.listProcesses(api, generation, options));
  }

  /** The running container's process, or (after it slept or died) what was kept of it. */
  async getProcess(id: string, ref?: HandleRef): Promise<ProcessRecord | null> {
    return this.#liveOrKept(
      id,
      ref,
      async ({ api, generation }) => {
        const found = await processes.getProcess(api, generation, id);
        if (!found) throw new ProcessNotFoundError(`process ${id} not found`);
        return found;
      },
      keptRecord,
      () => null,
    );
  }

  /**
   * A call about one process: answered by the running container, or from what was kept of an
   * earlier container's process — the one a handle's generation names, or the kept one of that id
   * when the running container does not know it. `missing` answers when neither knows it (default: PROCESS_NOT_FOUND).
   */
  async #liveOrKept<T>(id: string, ref: HandleRef | undefined, live: (link: Link) => Promise<T>, kept: (entry: LedgerEntry) => T, missing?: () => T): Promise<T> {
    return this.#guard(async () => {
      const link = await this.#link();
      const current = link.generation.instanceId;
      if (ref?.generation !== undefined && ref.generation !== current) {
        const entry = await this.#ledger.find(id, current, ref.generation);
        if (entry) return kept(entry);
        assertSameGeneration(ref, link.generation, id);
      }
      try {
        return await live(link);
      } catch (error) {
        if (!(error instanceof ProcessNotFoundError)) throw error;
        const entry = await this.#ledger.find(id, current);
        if (entry) return kept(entry);
        if (missing) return missing();
        throw error;
      }
    });
  }

  async killProcess(id: string, signal?: string | number, ref?: HandleRef): Promise<KillResult> {
    return this.#call(({ api }) => processes.killProcess(api, id, signal), { ref, processId: id });
  }

  async killAllProcesses(options: KillAllRequest = {}): Promise<number> {
    return this.#call(({ api }) => processes.killAllProcesses(api, options));
  }

  async streamProcessLogs(id: string, options: StreamResumeRequest = {}): Promise<ReadableStream<Uint8Array>> {
    return this.#liveOrKept(id, options, async (link) => this.#guardEvents(await processes.streamProcessLogs(link.api, id, options), link), (entry) =>
      keptLogStream(entry, options),
    );
  }

  async getProcessLogs(id: string, ref?: HandleRef): Promise<ProcessLogs> {
    return this.#liveOrKept(id, ref, ({ api }) => processes.getProcessLogs(api, id), keptLogs);
  }

  async cleanupCompletedProcesses(): Promise<number> {
    return this.#call(({ api }) => processes.cleanupCompletedProcesses(api));
  }

  async writeStdin(id: string, data: string, options: StdinOptions = {}): Promise<StdinResult> {
    return this.#call(({ api }) => processes.writeStdin(api, id, data, options), { ref: options, processId: id });
  }

  async closeStdin(id: string, ref?: HandleRef): Promise<StdinResult> {
    return this.#call(({ api }) => processes.closeStdin(api, id), { ref, processId: id });
  }

  // ── sessions ─────────────────────────────────────────────────────────────

  async createSession(options: CreateSessionOptions = {}): Promise<SessionInfo> {
    return this.#call(({ api }) => sessions.createSession(api, options));
  }

  async getSession(id: string): Promise<SessionInfo> {
    return this.#call(({ api }) => sessions.getSession(api, id));
  }

  async listSessions(): Promise<SessionInfo[]> {
    return this.#call(({ api }) => sessions.listSessions(api));
  }

  async deleteSession(id: string): Promise<DeleteSessionResult> {
    return this.#call(({ api }) => sessions.deleteSession(api, id));
  }

  // ── files ────────────────────────────────────────────────────────────────

  async writeFile(path: string, content: string, options?: WriteFileOptions): Promise<WriteFileResult> {
    return this.#call(({ api }) => files.writeFile(api, path, content, options));
  }

  /** The caller's stream goes on to the container as it arrives; an upload in flight keeps the container awake. */
  async writeFileStream(path: string, body: ReadableStream<Uint8Array>, options?: WriteStreamOptions): Promise<WriteFileResult> {
    return this.#call(({ api }) => files.writeFileStream(api, path, body, options));
  }

  async readFile(path: string, options?: ReadFileOptions): Promise<FileContent> {
    return this.#call(({ api }) => files.readFile(api, path, options));
  }

  async readFileStream(path: string): Promise<FileStream> {
    return this.#call(async ({ api }) => {
      const { body, ...file } = await files.openFile(api, path);
      return { ...file, stream: this.#guardStream(body) };
    });
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<MkdirResult> {
    return this.#call(({ api }) => files.mkdir(api, path, options));
  }

  async deleteFile(path: string, options?: DeleteFileOptions): Promise<DeleteFileResult> {
    return this.#call(({ api }) => files.deleteFile(api, path, options));
  }

  async renameFile(oldPath: string, newPath: string, options?: MoveOptions): Promise<RenameFileResult> {
    return this.#call(({ api }) => files.renameFile(api, oldPath, newPath, options));
  }

  async moveFile(sourcePath: string, destinationPath: string, options?: MoveOptions): Promise<MoveFileResult> {
    return this.#call(({ api }) => files.moveFile(api, sourcePath, destinationPath, options));
  }

  async listFiles(path?: string, options?: ListFilesOptions): Promise<FileListing> {
    return this.#call(({ api }) => files.listFiles(api, path, options));
  }

  async exists(path: string): Promise<ExistsResult> {
    return this.#call(({ api }) => files.exists(api, path));
  }

  async watch(path: string, options?: WatchOptions): Promise<ReadableStream<Uint8Array>> {
    return this.#call(async (link) => this.#guardEvents(await watching.watch(link.api, path, options), link));
  }

  async checkChanges(path: string, options?: ChangesOptions): Promise<ChangesResult> {
    return this.#call(({ api }) => watching.checkChanges(api, path, options));
  }

  // ── git ──────────────────────────────────────────────────────────────────

  /** A clone may take minutes: while it runs, the container stays awake as it does for an open stream. */
  async gitCheckout(repoUrl: string, options?: GitCheckoutOptions): Promise<GitCheckoutResult> {
    return this.#call(({ api }) => git.gitCheckout(api, repoUrl, options));
  }

  // ── code interpreter ─────────────────────────────────────────────────────

  async createCodeContext(options?: CodeContextOptions): Promise<CodeContext> {
    return this.#call(({ api }) => code.createCodeContext(api, options));
  }

  async listCodeContexts(): Promise<CodeContext[]> {
    return this.#call(({ api }) => code.listCodeContexts(api));
  }

  async getCodeContext(id: string): Promise<CodeContext> {
    return this.#call(({ api }) => code.getCodeContext(api, id));
  }

  async deleteCodeContext(id: string): Promise<DeleteCodeContextResult> {
    return this.#call(({ api }) => code.deleteCodeContext(api, id));
  }

  async restartCodeContext(id: string): Promise<CodeContext> {
    return this.#call(({ api }) => code.restartCodeContext(api, id));
  }

  /** A cell may run long: while it does, the container stays awake as it does for an open stream. */
  async runCode(source: string, options?: RunCodeRequestOptions): Promise<Execution> {
    return this.#call(({ api }) => code.runCode(api, source, options), { key: options?.idempotencyKey });
  }

  async runCodeStream(source: string, options?: RunCodeRequestOptions): Promise<ReadableStream<Uint8Array>> {
    return this.#call(async (link) => this.#guardEvents(await code.runCodeStream(link.api, source, options), link), { key: options?.idempotencyKey });
  }

  /** A broken runCodeStream picks up here, from its last event id. */
  async resumeCodeStream(executionId: string, options: StreamResumeRequest = {}): Promise<ReadableStream<Uint8Array>> {
    return this.#call(async (link) => this.#guardEvents(await code.resumeCodeStream(link.api, executionId, options), link));
  }

  async interruptCode(executionId: string): Promise<InterruptCodeResult> {
    return this.#call(({ api }) => code.interruptCode(api, executionId));
  }

  // ── terminals ────────────────────────────────────────────────────────────

  async createTerminal(options?: TerminalOptions): Promise<TerminalInfo> {
    return this.#call(({ api }) => terminals.createTerminal(api, options));
  }

  async listTerminals(): Promise<TerminalInfo[]> {
    return this.#call(({ api }) => terminals.listTerminals(api));
  }

  async getTerminal(id: string): Promise<TerminalInfo> {
    return this.#call(({ api }) => terminals.getTerminal(api, id));
  }

  async writeTerminal(id: string, data: string | Uint8Array): Promise<TerminalWriteResult> {
    return this.#call(({ api }) => terminals.writeTerminal(api, id, data));
  }

  async resizeTerminal(id: string, cols: number, rows: number): Promise<TerminalInfo> {
    return this.#call(({ api }) => terminals.resizeTerminal(api, id, cols, rows));
  }

  async interruptTerminal(id: string): Promise<TerminalIdResult> {
    return this.#call(({ api }) => terminals.interruptTerminal(api, id));
  }

  async killTerminal(id: string, signal?: string | number): Promise<TerminalKillResult> {
    return this.#call(({ api }) => terminals.killTerminal(api, id, signal));
  }

  async waitForTerminal(id: string): Promise<TerminalInfo> {
    return this.#call(({ api }) => terminals.waitForTerminal(api, id));
  }

  async terminalOutput(id: string, options?: TerminalOutputOptions): Promise<TerminalOutput> {
    return this.#call(({ api }) => terminals.terminalOutput(api, id, options));
  }

  async deleteTerminal(id: string): Promise<TerminalIdResult> {
    return this.#call(({ api }) => terminals.deleteTerminal(api, id));
  }

  /**
   * The container's answer to the upgrade: a 101 with the viewer's socket, or its coded error. Over
   * Workers RPC a WebSocket cannot travel, so callers outside reach this through fetch (below).
   */
  async connectTerminal(id: string, request: Request): Promise<Response> {
    return this.#call(async () => {
      const response = await terminals.connectTerminal(this.ctx.container!.getTcpPort(CONTAINER_SERVER_PORT), id, request);
      if (response.status !== 101) throw await errorFromResponse(response);
      return response;
    });
  }

  // ── preview ports ────────────────────────────────────────────────────────

  /** Starts the container when none runs: an exposure is served by the container it was made in (ports.ts). */
  async exposePort(port: number, options: ExposePortOptions = {}): Promise<ExposedPort> {
    return this.#guard(() =>
      this.#ports.expose(port, options, this.#previewUrls(), async () => (await this.#keepingAwake(() => this.#link())).generation.instanceId),
    );
  }

  /** Needs no container; a port that is not exposed is no error. */
  async unexposePort(port: number): Promise<UnexposePortResult> {
    return this.#guard(async () => {
      await this.#ports.unexpose(port);
      return { port };
    });
  }

  /** The ports the running container serves; never wakes one. */
  async getExposedPorts(options: ExposedPortsOptions = {}): Promise<ExposedPort[]> {
    return this.#guard(async () => {
      const origin = typeof options === "string" ? serviceOrigin({ hostname: options }) : options.origin;
      return this.#ports.list(this.#previewUrls(), origin, await this.#runningGeneration());
    });
  }

  #previewUrls(): UrlContext {
    return { sandboxId: this.ctx.id.name ?? this.ctx.id.toString(), settings: previewSettings(this.env) };
  }

  /** The running container's instance id (asked of it once per container), or undefined when none runs or it does not answer. */
  async #runningGeneration(): Promise<string | undefined> {
    const container = this.ctx.container;
    if (!container?.running) return undefined;
    try {
      const api = new ContainerApi(container.getTcpPort(CONTAINER_SERVER_PORT));
      return (await this.#generations.current(() => api.json<PingResponse>("GET", INFO_ROUTES.ping))).instanceId;
    } catch {
      return undefined;
    }
  }

  /**
   * A proxied request for a preview port (see portProxyRequest). The registry decides first, from
   * storage and whether a container runs: a port that is not exposed, a caller without its token, or
   * an exposure made in an earlier container never wakes one.
   */
  async #servePort(parts: PortRequestParts, request: Request): Promise<Response> {
    try {
      let admittedIn: string | undefined;
      const { answer, isPublic } = await this.#ports.admit(parts, request, async () => (admittedIn = await this.#runningGeneration()));
      if (answer) return answer;
      this.#calls++;
      this.#lastActivityAt = Date.now();
      this.#nextCheckAt = undefined;
      this.renewActivityTimeout();
      let forwarded: Response;
      try {
        forwarded = await forwardToPort(this.ctx.container!.getTcpPort(CONTAINER_SERVER_PORT), parts, request, isPublic);
      } catch (error) {
        // The container went away between the check and the request (or before this object noticed):
        // asked afresh, a container that is gone or another one makes the URL stale, not broken.
        this.#generations.reset();
        if ((await this.#runningGeneration()) !== admittedIn) throw staleUrl(parts.port);
        throw error;
      }
      const response = guardedPortResponse(parts, request, forwarded);
      if (response.status === 101 || response.body === null) return response;
      // A long answer (a stream, a download) keeps the container awake while it flows.
      return new Response(this.#guardStream(response.body), response);
    } catch (error) {
      const coded = asSandboxError(error);
      return Response.json(errorBody(coded.code, coded.message, coded.context), { status: coded.httpStatus });
    }
  }

  /** A viewer's upgrade (see terminalSocketRequest) and preview-port requests are served here; anything else goes to the container as the base class does. */
  override async fetch(request: Request): Promise<Response> {
    const portParts = portRequestParts(request);
    if (portParts) return this.#servePort(portParts, request);
    const terminalId = terminalSocketId(request);
    if (terminalId === undefined) return super.fetch(request);
    try {
      return await this.connectTerminal(terminalId, request);
    } catch (error) {
      const coded = fromRpcError(error);
      return Response.json(errorBody(coded.code, coded.message, coded.context), { status: coded.httpStatus });
    }
  }

  // ── snapshots ────────────────────────────────────────────────────────────

  async createBackup(options: CreateBackupOptions = {}): Promise<BackupInfo> {
    return this.#call(async ({ api }) => {
      const request = parseRequest(createBackupRequestSchema, options, "backup request");
      const store = this.#persistence.backups();
      const backup = await store.create(api, request, this.#backupQuota);
      // The alarm removes it from the bucket when it expires (it is gone to callers from then on anyway).
      if (backup.expiresAt !== undefined) await this.schedule(new Date(backup.expiresAt), "removeExpiredBackups");
      return backup;
    });
  }

  /** Needs no container: the bucket alone knows. */
  async listBackups(options: ListBackupsOptions = {}): Promise<BackupInfo[]> {
    return this.#guard(async () => {
      const { label } = parseRequest(listBackupsQuerySchema, options, "backup listing");
      const labels = (label === undefined ? [] : [label].flat()).flatMap((part) => part.split(",")).filter(Boolean);
      return this.#persistence.backups().list(labels);
    });
  }

  /** Run by the alarm at a backup's expiry: removes the expired ones, and is set again for the next. */
  async removeExpiredBackups(): Promise<void> {
    try {
      const next = await this.#persistence.backups().removeExpired();
      if (next !== undefined) await this.schedule(new Date(next), "removeExpiredBackups");
    } catch (error) {
      console.error(`sandbox ${this.ctx.id.name ?? this.ctx.id.toString()}: removing expired backups failed:`, error instanceof Error ? error.message : error);
    }
  }

  async restoreBackup(id: string, options: RestoreBackupOptions = {}): Promise<RestoreBackupResult> {
    return this.#call(async ({ api }) => {
      const request = parseRequest(restoreBackupRequestSchema, options, "restore request");
      const store = this.#persistence.backups();
      await store.get(id);
      return store.restore(api, id, request);
    });
  }

  async deleteBackup(id: string): Promise<DeleteBackupResult> {
    return this.#guard(() => this.#persistence.backups().delete(id));
  }

  // ── forks ────────────────────────────────────────────────────────────────

  /**
   * A new sandbox with this one's workspace (live, or the snapshot `from`), config and env. The
   * archive streams from this container (or the bucket) into the new sandbox's container, over
   * Workers RPC between the two Durable Objects: nothing passes through the caller, and several
   * forks of one sandbox run side by side.
   */
  async fork(newId: string, options: ForkOptions = {}): Promise<ForkResult> {
    return this.#guard(async () => {
      const request = parseRequest(forkRequestSchema, { ...options, newId }, "fork request");
      const parent = this.ctx.id.name ?? this.ctx.id.toString();
      if (!isValidSandboxId(request.newId)) throw new InvalidRequestError(`${JSON.stringify(request.newId)} is not a valid sandbox id`, "INVALID_SANDBOX_ID");
      if (request.newId === parent) throw new InvalidRequestError("a sandbox cannot be forked into itself", "INVALID_REQUEST");
      const config = (await this.ctx.storage.get<SandboxConfig>(CONFIG_KEY)) ?? {};
      const child = this.env.Sandbox.get(this.env.Sandbox.idFromName(request.newId));
      const { entries } = await this.#keepingAwake(async () => {
        const archive = request.from === undefined ? await openArchive((await this.#link()).api, {}) : await this.#persistence.backups().open(request.from);
        // The child's coded errors cross Workers RPC encoded: decoded, they keep their code.
        return child.acceptFork(config, archive).catch((error: unknown) => {
          throw fromRpcError(error);
        });
      });
      return { id: request.newId, parent, from: request.from ?? null, entries };
    });
  }

  /**
   * The receiving end of fork(): only a sandbox that has never run takes one. It keeps the parent's
   * config, starts its container and extracts the archive into its workspace as it arrives.
   */
  async acceptFork(config: SandboxConfig, archive: ReadableStream<Uint8Array>): Promise<{ entries: number }> {
    return this.#guard(async () => {
      if ((await this.#generations.everRan()) || (await this.ctx.storage.get(CONFIG_KEY)) !== undefined) {
        await archive.cancel().catch(() => undefined);
        throw errorFromCode("SANDBOX_EXISTS", `sandbox ${this.ctx.id.name ?? ""} has run before: a fork makes a new sandbox`, { context: { sandboxId: this.ctx.id.name } });
      }
      await this.#updateConfig(() => ({ ...config }));
      const { api } = await this.#link();
      const entries = await this.#keepingAwake(() => extractReplacing(api, archive, ["."]));
      return { entries };
    });
  }

  /** The archive streams out as the container makes it; while it does, the container stays awake. */
  async exportArchive(options: ExportArchiveOptions = {}): Promise<ReadableStream<Uint8Array>> {
    return this.#call(async ({ api }) => this.#guardStream(await openArchive(api, parseRequest(createArchiveRequestSchema, options, "archive request"))));
  }

  async importArchive(body: ReadableStream<Uint8Array>, options: ImportArchiveOptions = {}): Promise<ImportArchiveResult> {
    return this.#call(async ({ api }) => {
      if (!(body instanceof ReadableStream)) throw new InvalidRequestError("importArchive needs a ReadableStream of bytes", "INVALID_REQUEST");
      return extractOver(api, body, parseRequest(importArchiveOptionsSchema, options, "archive import").dir);
    });
  }

  // ── network ──────────────────────────────────────────────────────────────

  /**
   * A new network policy, in force at once for running processes (connections it denies are cut).
   * On Cloudflare the platform's interception carries it (cloudflare-egress/): a policy with a part
   * the platform cannot enforce is refused rather than kept unenforced, and the internet switch it
   * needs applies from the container's next start.
   */
  async setNetworkPolicy(policy: NetworkPolicyInput): Promise<NetworkPolicyState> {
    return this.#guard(async () => {
      const local = this.#localContainer();
      const checked = parseRequest(networkPolicySchema, policy, "network policy");
      if (!local) {
        this.#platformEgress.refuseGaps(checked);
        await this.#network.setPolicy(checked);
        this.enableInternet = this.#platformEgress.internetFor(checked);
        await this.setOutboundHandler(EGRESS_HANDLER);
        await this.#platformEgress.intercepting();
        return this.#networkState();
      }
      await this.#network.setPolicy(checked);
      await this.#pushEgress();
      return this.#networkState();
    });
  }

  async getNetworkPolicy(): Promise<NetworkPolicyState> {
    return this.#guard(() => this.#networkState());
  }

  /** Write-only: the value goes to the proxy that injects it, and is never read back. */
  async setSecret(name: string, value: string): Promise<SecretInfo> {
    return this.#guard(async () => {
      const checkedName = parseRequest(secretNameSchema, name, "secret name");
      const { value: checkedValue } = parseRequest(setSecretRequestSchema, { value }, "secret");
      const info = await this.#network.setSecret(checkedName, checkedValue);
      await this.#pushEgress();
      return info;
    });
  }

  async listSecrets(): Promise<SecretInfo[]> {
    return this.#guard(() => this.#network.listSecrets());
  }

  async deleteSecret(name: string): Promise<DeleteSecretResult> {
    return this.#guard(async () => {
      if (!(await this.#network.deleteSecret(name))) throw errorFromCode("SECRET_NOT_FOUND", `No secret named "${name}"`, { context: { name } });
      await this.#pushEgress();
      return { name, deleted: true };
    });
  }

  /** Outbound connections, requests and lookups after `since`, as the proxy (or on Cloudflare, the outbound handler) saw them. */
  async getNetworkAudit(query: AuditQuery = {}): Promise<AuditPage> {
    return this.#guard(async () => {
      const local = this.#localContainer();
      const checked = parseRequest(auditQuerySchema, query, "audit query");
      if (!local) return this.#platformEgress.read(checked.since ?? 0, checked.limit);
      return this.#runtimeCall(() => local.egressAudit(checked));
    });
  }

  /**
   * The audit trail as it grows, as Server-Sent Events from after `resume.since`. Watching it
   * neither starts the container nor keeps it awake.
   */
  async streamNetworkAudit(resume: AuditResume = {}): Promise<ReadableStream<Uint8Array>> {
    return this.#guard(async () => {
      const local = this.#localContainer();
      const { since } = parseRequest(auditResumeSchema, resume, "audit resume point");
      if (!local) return auditEventStream((from, waitMs, signal) => this.#platformEgress.read(from, undefined, waitMs, signal), since);
      return auditEventStream((from, waitMs, signal) => this.#runtimeCall(() => local.egressAudit({ since: from }, waitMs, signal)), since);
    });
  }

  /**
   * For the Worker's outbound handler on Cloudflare (never a /v1 route): judges one request the
   * container sent out, and answers the headers to add to it, secrets filled in, for that request only.
   */
  async judgeEgress(request: EgressRequest): Promise<EgressJudgement> {
    return this.#guard(() => this.#platformEgress.judge(request));
  }

  /** For the Worker's outbound handler: the audit entry of a request it let through, once its answer ended. */
  async recordEgress(record: AuditRecord): Promise<void> {
    return this.#guard(async () => this.#platformEgress.record(record));
  }

  /** `enforced`: the sandbox's running container sends its traffic only through the proxy (a container with network). */
  async #networkState(): Promise<NetworkPolicyState> {
    const policy = await this.#network.policy();
    const local = this.#localContainer();
    const enforced = local
      ? local.running && (await this.#runtimeCall(() => local.state())).egressProxy === true
      : await this.#platformEgress.enforced(policy, this.ctx.container?.running === true);
    return { policy, enforced, missingSecrets: await this.#network.missingSecrets(policy) };
  }

  /** The local runtime's proxy learns of a change at once (it keeps it for the next start too). */
  async #pushEgress(): Promise<void> {
    const local = this.#localContainer();
    if (!local) return;
    const egress = await this.#network.runtimeEgress();
    await this.#runtimeCall(() => local.setEgress(egress));
  }

  /** A runtime refusal keeps its code; an unreachable runtime is CONTAINER_UNAVAILABLE. */
  async #runtimeCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof LocalRuntimeError && error.code !== undefined) throw errorFromCode(error.code, error.message, { cause: error });
      throw error;
    }
  }

  // ── plumbing ─────────────────────────────────────────────────────────────

  /**
   * Runs one RPC call against the running container; a handle's generation is checked first. The
   * call is activity while it is in flight (a start, a long command, an upload), so the container
   * never sleeps under it; a stream it returns counts on as long as it is open. A run named by an
   * idempotency key is noted against this container before it is sent (run-key-claims.ts).
   */
  async #call<T>(work: (link: Link) => Promise<T>, about?: { ref: HandleRef | undefined; processId: string } | { key: string | undefined }): Promise<T> {
    return this.#guard(() =>
      this.#keepingAwake(async () => {
        const link = await this.#link();
        if (about && "key" in about) this.#runKeys.claim(about.key, link.generation);
        else if (about) assertSameGeneration(about.ref, link.generation, about.processId);
        return work(link);
      }),
    );
  }

  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toRpcError(error);
    }
  }

  async #link(): Promise<Link> {
    this.#calls++;
    this.#lastActivityAt = Date.now();
    this.#nextCheckAt = undefined;
    this.renewActivityTimeout();
    await this.#ensureRunning();
    const api = new ContainerApi(this.ctx.container!.getTcpPort(CONTAINER_SERVER_PORT));
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
    try {
      await this.startAndWaitForPorts({
        ports: [CONTAINER_SERVER_PORT],
        cancellationOptions: { portReadyTimeoutMS: READINESS.portReadyTimeoutMs, waitInterval: READINESS.pollIntervalMs },
      });
      this.#startup = { startedAt: new Date(startedAt).toISOString(), readyMs: Date.now() - startedAt, probes: this.#probes };
    } catch (error) {
      if (error instanceof SandboxError) throw error;
      // The local runtime refused the start for a reason of its own (e.g. ISOLATION_UNAVAILABLE): keep its code.
      if (error instanceof LocalRuntimeError && error.code !== undefined && error.code !== "CONTAINER_UNAVAILABLE") {
        throw errorFromCode(error.code, error.message, { cause: error });
      }
      throw new ContainerUnavailableError(
        `The sandbox's container could not be started: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  /** Work the container must stay awake for: counted as an open stream while it runs. */
  async #keepingAwake<T>(work: () => Promise<T>): Promise<T> {
    this.#streamOpened();
    try {
      return await work();
    } finally {
      this.#streamClosed();
    }
  }

  #streamOpened(): void {
    this.#openStreams++;
  }

  /** The idle clock starts again when the last of them ends, not when it began. */
  #streamClosed(): void {
    this.#openStreams--;
    this.#lastActivityAt = Date.now();
    this.renewActivityTimeout();
  }

  #guardStream(body: ReadableStream<Uint8Array>, containerGone?: () => Promise<boolean>): ReadableStream<Uint8Array> {
    return guardStream(body, {
      onOpen: () => this.#streamOpened(),
      onClose: () => this.#streamClosed(),
      ...(containerGone ? { containerGone } : {}),
    });
  }

  /** An event stream, which ends with a coded error event when its container goes away under it. */
  #guardEvents(body: ReadableStream<Uint8Array>, { api, generation }: Link): ReadableStream<Uint8Array> {
    return this.#guardStream(
      body,
      async () => !this.ctx.container?.running || !(await stillThere(() => api.json<PingResponse>("GET", INFO_ROUTES.ping), generation)),
    );
  }
}
