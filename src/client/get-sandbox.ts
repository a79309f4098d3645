/**
 * getSandbox(env.Sandbox, "my-id") — a sandbox client for Worker code, over Workers RPC to the
 * sandbox's Durable Object. Creating one is free: the container starts on the first call.
 */
import type { Sandbox } from "../sandbox.ts";
import { assertSandboxId } from "./sandbox-id.ts";
import { rpcTransport } from "./rpc-transport.ts";
import { SandboxClient } from "./sandbox-client.ts";
import type { SandboxConfig } from "./types.ts";

export type GetSandboxOptions = SandboxConfig;

export function getSandbox(namespace: DurableObjectNamespace<Sandbox>, id: string, options: GetSandboxOptions = {}): SandboxClient {
  assertSandboxId(id);
  const stub = namespace.get(namespace.idFromName(id));
  // Settings travel once, before the first call of this client.
  let configured: Promise<void> | undefined;
  const hasConfig = options.sleepAfter !== undefined || options.envVars !== undefined;
  const before = hasConfig ? () => (configured ??= stub.configure(options)) : undefined;
  return new SandboxClient(id, rpcTransport(stub, before));
}
