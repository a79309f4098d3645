/** How the client's objects (sandbox, session, process handle) reach the sandbox. */
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { RetryPolicy } from "../rpc/resumable-stream.ts";

export interface Connection {
  /** The Sandbox Durable Object's stub (getSandbox) or the /v1 HTTP API (getHttpSandbox). */
  rpc: SandboxRpc;
  /** How broken streams are reconnected (default: resumable-stream.ts). */
  retry?: RetryPolicy | undefined;
  /**
   * false: commands that name no session (exec, execStream, run, startProcess) run isolated instead
   * of in the default session, as Cloudflare's `enableDefaultSession: false` (default true).
   */
  enableDefaultSession?: boolean | undefined;
}

/** The caller-side settings getSandbox and getHttpSandbox both take. */
export interface ClientOptions {
  /** false: commands that name no session run isolated (a fresh shell each), not in the default session. */
  enableDefaultSession?: boolean;
}
