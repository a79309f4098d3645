/** How the client's objects (sandbox, session, process handle) reach the sandbox. */
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { RetryPolicy } from "../rpc/resumable-stream.ts";

export interface Connection {
  /** The Sandbox Durable Object's stub (getSandbox) or the /v1 HTTP API (getHttpSandbox). */
  rpc: SandboxRpc;
  /** How broken streams are reconnected (default: resumable-stream.ts). */
  retry?: RetryPolicy | undefined;
}
