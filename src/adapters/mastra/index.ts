/**
 * `edge-sandbox/mastra`: a Mastra workspace sandbox on this service.
 *
 *   const sandbox = new EdgeSandbox({ url, token, sandboxId: "my-agent" });   // or { binding: env.Sandbox, sandboxId }
 *   const workspace = new Workspace({ sandbox });
 */
export { EdgeSandbox } from "./sandbox.ts";
export { EdgeProcessManager } from "./process-manager.ts";
export { EdgeProcessHandle } from "./process-handle.ts";
export type { EdgeSandboxOptions } from "./options.ts";
export type { SandboxConnection, HttpConnection, BindingConnection, SandboxBinding } from "../shared/connection.ts";
