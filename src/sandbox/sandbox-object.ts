/**
 * The Sandbox Durable Object as other code names it: what the Worker's `Sandbox` binding (env.ts)
 * reaches over Workers RPC. It is the API every caller has (SandboxRpc), and the few calls only the
 * service itself makes of a sandbox: another sandbox handing it a fork, the Worker's outbound handler
 * asking it to judge a request, its own alarm. Declared here, apart from the class, so that the
 * Worker's env and the class's own modules can name it without importing each other.
 */
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { SandboxConfig } from "../rpc/sandbox.ts";
import type { EgressJudge } from "./cloudflare-egress/judge.ts";

/** Calls the service makes of a sandbox itself; none of them is a /v1 route. */
export interface SandboxPeerRpc extends EgressJudge {
  /** The receiving end of fork(): a sandbox that has never run takes the parent's config and workspace archive. */
  acceptFork(config: SandboxConfig, archive: ReadableStream<Uint8Array>): Promise<{ entries: number }>;
  /** Run by the alarm at a backup's expiry. */
  removeExpiredBackups(): Promise<void>;
}

/** Every method a Sandbox Durable Object offers over Workers RPC. */
export interface SandboxObject extends SandboxRpc, SandboxPeerRpc, Rpc.DurableObjectBranded {
  fetch(request: Request): Promise<Response>;
}
