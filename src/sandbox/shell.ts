/**
 * What the Sandbox Durable Object (durable-object.ts) lends the families of its RPC methods
 * (`*-methods.ts`): the way to the container (a call, its link, keeping it awake), the parts it keeps
 * (generations, ports, the process ledger, the durable workspace, the network settings) and its
 * config. A family method takes the shell first, then its own arguments; methods.ts puts each one on
 * the class's prototype.
 *
 * The shell is a private field of the object, never a method of it: Workers RPC offers every method
 * of the class's prototype to every caller, and nothing here is for callers.
 */
import type { Container } from "@cloudflare/containers";
import type { InfoResponse } from "../../protocol/info.ts";
import type { BackupQuota } from "../../protocol/backups.ts";
import type { Env } from "../env.ts";
import type { HandleRef } from "../rpc/processes.ts";
import type { SandboxConfig, StartupTiming } from "../rpc/sandbox.ts";
import type { PlatformEgress } from "./cloudflare-egress/platform-egress.ts";
import type { ContainerApi, PortFetcher } from "./container-api.ts";
import type { Generation, GenerationTracker } from "./generation.ts";
import type { decide, KeepAliveFacts, KeepAliveSettings } from "./keep-alive.ts";
import type { NetworkSettings } from "./network.ts";
import type { Persistence } from "./persistence/persistence.ts";
import type { PortRegistry } from "./ports.ts";
import type { ProcessLedger } from "./process-ledger.ts";
import type { RunKeyClaims } from "./run-key-claims.ts";
import type { RuntimeChannel } from "./runtime-channel.ts";
import type { SandboxObject } from "./sandbox-object.ts";

/** The running container as a call reaches it: its server's API and its generation. */
export interface Link {
  api: ContainerApi;
  generation: Generation;
}

/** What a call is about: a process handle (its generation must be the running one) or a run's idempotency key (claimed first). */
export type CallAbout = { ref: HandleRef | undefined; processId: string } | { key: string | undefined };

export interface KeepAliveReading {
  settings: KeepAliveSettings;
  facts: KeepAliveFacts;
  verdict: ReturnType<typeof decide>;
}

export interface SandboxShell {
  /** The Durable Object as its base class offers it (schedule, setOutboundHandler, enableInternet, sleepAfter). */
  readonly object: Container<Env>;
  readonly ctx: DurableObjectState<{}>;
  readonly env: Env;
  /** The sandbox's id: the object's name, else its id. */
  readonly sandboxId: string;

  /**
   * One RPC call against the running container (started if need be), with the handle's generation
   * checked or the run's key claimed first. The call keeps the container awake while in flight;
   * errors leave encoded for RPC.
   */
  call<T>(work: (link: Link) => Promise<T>, about?: CallAbout): Promise<T>;
  /** A call that may not need the container: only its errors are encoded for RPC. */
  guard<T>(work: () => Promise<T>): Promise<T>;
  /** The running container (started if need be), its env given and its workspace restored; counts as activity. */
  link(): Promise<Link>;
  /** Work the container must stay awake for (counted as an open stream while it runs). */
  keepingAwake<T>(work: () => Promise<T>): Promise<T>;
  /** A stream that keeps the container awake while it is open; `containerGone` ends it with a coded error event. */
  guardStream(body: ReadableStream<Uint8Array>, containerGone?: () => Promise<boolean>): ReadableStream<Uint8Array>;
  /** An event stream of `link`'s container, ended with a coded error event when that container goes away. */
  guardEvents(body: ReadableStream<Uint8Array>, link: Link): ReadableStream<Uint8Array>;
  /** A request that reaches the container without a link (a preview port's): activity, as a call is. */
  noteActivity(): void;

  readonly generations: GenerationTracker;
  readonly ports: PortRegistry;
  readonly ledger: ProcessLedger;
  readonly runKeys: RunKeyClaims;
  readonly persistence: Persistence;
  readonly network: NetworkSettings;
  /** Where no local runtime's proxy stands in front of the container: the platform's interception. */
  readonly platformEgress: PlatformEgress;
  /** What only the local runtime offers: operator's walls, egress at once, the audit (undefined on Cloudflare). */
  readonly runtime: RuntimeChannel | undefined;
  /** The container server's port (the container is not started by it), every request carrying the server's secret. */
  serverPort(): PortFetcher;

  /** Changes the kept config and applies it (new walls checked first, and a container with other walls replaced). */
  updateConfig(change: (stored: SandboxConfig) => SandboxConfig): Promise<void>;
  /** The config's limits on this sandbox's snapshots. */
  backupQuota(): BackupQuota;
  /** Stops the container now; the next call starts a new generation. */
  destroyContainer(): Promise<void>;
  /** Whether the sandbox sleeps now, from its streams, its calls and what its container reports. `asking`: calls in flight that only ask. */
  keepAliveReading(report?: Pick<InfoResponse, "activity" | "uptimeMs">, asking?: number): Promise<KeepAliveReading>;
  /** How the last container start this object made went. */
  startup(): StartupTiming | undefined;
}

/** A method of the Durable Object as its family writes it: the shell, then the RPC method's own arguments. */
type ShellMethod<M> = M extends (...args: infer A) => infer R ? (shell: SandboxShell, ...args: A) => R : never;

/**
 * The object's RPC methods that come from families: all but fetch and destroy, which override the
 * base class's and so are the class's own (destroy's body is the lifecycle family's destroySandbox).
 */
export type FamilyMethodName = Exclude<keyof SandboxObject, "fetch" | "destroy" | keyof Rpc.DurableObjectBranded>;

/** Every RPC method of the object that a family gives, as the families write them. */
export type ShellMethods = { [K in FamilyMethodName]: ShellMethod<SandboxObject[K]> };

/** A family's methods: some of them, each typed by its RPC signature. */
export type FamilyMethods = Partial<ShellMethods>;
