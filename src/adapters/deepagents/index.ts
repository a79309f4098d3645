/**
 * `edge-sandbox/deepagents`: a LangChain deepagents sandbox backend on this service.
 *
 *   const backend = await EdgeDeepAgentsSandbox.create({ url, token, sandboxId: "my-agent" });  // or { binding: env.Sandbox, sandboxId }
 *   const agent = createDeepAgent({ model, backend });
 */
export { EdgeDeepAgentsSandbox } from "./sandbox.ts";
export type { EdgeDeepAgentsSandboxOptions } from "./options.ts";
export type { SandboxConnection, HttpConnection, BindingConnection, SandboxBinding } from "../shared/connection.ts";
