/** The sandbox as a whole, as it crosses Workers RPC and the /v1 API: its settings and what it reports. */
import type { InfoResponse } from "../../protocol/info.ts";
import type { IsolationRequest } from "../../protocol/isolation.ts";
import type { WithoutEnvelope } from "../../protocol/process.ts";
import type { PersistenceConfig, PersistenceStatus } from "../../protocol/backups.ts";

/** What a sandbox reports about itself. */
export interface SandboxInfo {
  /** The container generation now running (its instance id). */
  generation: string;
  /** How many containers this sandbox has started so far, counting this one. */
  generationNumber: number;
  containerStartedAt: string;
  sleepAfter: string;
}

/**
 * Sandbox-wide settings, given to getSandbox() and kept by the Durable Object.
 *
 * The isolation fields (`isolation`, `allowNetwork`, `readOnlyPaths`, `readWritePaths`,
 * `allowSystemBinaries`) confine commands under the local container runtime, where no real container
 * wraps them, inside the walls its operator set: the runtime refuses a config below them
 * (ISOLATION_NOT_ALLOWED; `bwrapArgs` always, they are the operator's). On Cloudflare the container
 * itself is the wall and these fields are not used. Changing them while the container runs restarts
 * it (its processes end), so the walls always match.
 */
export interface SandboxConfig extends IsolationRequest {
  /** Idle time before the container sleeps, e.g. "10m", "30s" or seconds as a number. */
  sleepAfter?: string | number;
  /** Environment of the container (replaces the sandbox env vars; applied to the running container too). */
  envVars?: Record<string, string>;
  /**
   * A durable workspace: saved to the Worker's R2 bucket (`bucket`: its binding's name, default
   * SANDBOX_BACKUPS) when the container sleeps or is destroyed with `keep: true`, restored before the
   * first command after the next start. null turns it off.
   */
  persistence?: PersistenceConfig | null;
}

/** How the last container start went, when this sandbox's Durable Object started it. */
export interface StartupTiming {
  /** When the start was asked for (ISO). */
  startedAt: string;
  /** From the start request until the container server answered a readiness probe. */
  readyMs: number;
  /** Readiness probes sent until one was answered. */
  probes: number;
}

/** getInfo(): the sandbox's generation and settings with what its container server reports. */
export type SandboxDetails = SandboxInfo & Omit<WithoutEnvelope<InfoResponse>, "instanceId"> & { startup?: StartupTiming; persistence: PersistenceStatus };
