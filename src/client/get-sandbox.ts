/**
 * getSandbox(env.Sandbox, "my-id") — a sandbox client for Worker code, over Workers RPC to the
 * sandbox's Durable Object. Creating one is free: the container starts on the first call.
 */
import type { SandboxConfig } from "../rpc/sandbox.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import { rpcTransport } from "../rpc/stub-transport.ts";
import { assertSandboxId } from "./sandbox-id.ts";
import { SandboxClient } from "./sandbox-client.ts";
import type { ClientOptions } from "./connection.ts";

/** A Durable Object class that serves SandboxRpc: the Worker's `Sandbox` binding names one. */
export type SandboxDurableObject = SandboxRpc & Rpc.DurableObjectBranded;

/**
 * The Worker's binding of such a class (`env.Sandbox`). Only the two methods getSandbox uses, so a
 * namespace of any class serving SandboxRpc fits (DurableObjectNamespace<T> itself is invariant in T).
 */
export interface SandboxNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): DurableObjectStub<SandboxDurableObject>;
}

/**
 * Settings of the sandbox: `sleepAfter`, `envVars`, and its isolation under the local runtime
 * (`isolation: "none" | "bwrap"`, `allowNetwork`, `readOnlyPaths`, `readWritePaths`,
 * `allowSystemBinaries`, within the walls the runtime's operator set; on Cloudflare the container is
 * the isolation). They are kept by the sandbox and sent before the first call of this client.
 * `enableDefaultSession` belongs to this client alone (connection.ts) and is not sent.
 */
export type GetSandboxOptions = SandboxConfig & ClientOptions;

export function getSandbox(namespace: SandboxNamespace, id: string, options: GetSandboxOptions = {}): SandboxClient {
  assertSandboxId(id);
  const stub = namespace.get(namespace.idFromName(id));
  const { enableDefaultSession, ...config } = options;
  // Settings travel once, before the first call of this client.
  let configured: Promise<void> | undefined;
  const hasConfig = Object.values(config).some((value) => value !== undefined);
  const before = hasConfig ? () => (configured ??= stub.configure(config)) : undefined;
  return new SandboxClient(id, { rpc: rpcTransport(stub, before), enableDefaultSession });
}
