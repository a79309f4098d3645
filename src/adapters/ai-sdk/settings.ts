/**
 * What an AI SDK sandbox provider of this service is built from: where the service is (over HTTP,
 * `{url, token}`, or in a Worker, `{binding}` with the service's public `origin` for port URLs), the
 * ports every session exposes, its network, the sandbox settings every session starts with, and the
 * prefix of the sandbox ids it names.
 */
import type { HarnessV1NetworkPolicy } from "@ai-sdk/harness";
import type { HttpConnection, BindingConnection } from "../shared/connection.ts";
import type { SandboxConfig } from "../../client/index.ts";

export type ServiceConnection = Omit<HttpConnection, "sandboxId"> | (Omit<BindingConnection, "sandboxId"> & { origin?: string });

/** A network policy of the harness contract, or the name of a preset (see network-policy.ts). */
export type NetworkSetting = "allow-all" | "deny-all" | HarnessV1NetworkPolicy;

export type EdgeSandboxProviderSettings = ServiceConnection & {
  /** Ports each session exposes at creation (1024–65535), reached by `getPortEndpoint`. */
  ports?: number[];
  /** The session's network at creation; default: the service's default for the sandbox. */
  network?: NetworkSetting;
  /**
   * Sandbox settings applied at creation (isolation, sleepAfter, envVars, persistence). With
   * `persistence`, `stop()` saves the workspace so a resumed session finds its files on Cloudflare,
   * where a container's disk does not outlive it.
   */
  sandbox?: SandboxConfig;
  /** Prefix of the sandbox ids sessions are given (default `ai`): `ai-<sessionId>`. */
  idPrefix?: string;
};

/** The service origin port URLs are built on: the HTTP API's own, or the one given with a binding. */
export function serviceOrigin(settings: ServiceConnection): string | undefined {
  return "url" in settings ? new URL(settings.url).origin : settings.origin;
}
