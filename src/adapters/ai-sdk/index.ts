/**
 * `edge-sandbox/ai-sdk`: the AI SDK's sandbox session and `harness-sandbox-v1` provider on this
 * service, over HTTP (`{ url, token }`) or in a Worker (`{ binding: env.Sandbox, origin }`).
 *
 *   const sandbox = createEdgeSandbox({ url, token, ports: [3000] });
 *   const session = await sandbox.createSession({ sessionId: "chat-42" });
 *   await session.run({ command: "node -v" });
 *   await generateText({ model, tools, experimental_sandbox: session.restricted(), prompt });
 *   const { url } = await session.getPortEndpoint({ port: 3000, protocol: "ws" });   // wss://…?token=…
 */
export { createEdgeSandbox, type EdgeSandboxProvider, type CreateSessionOptions } from "./provider.ts";
export { EdgeSandboxSession } from "./session.ts";
export { EdgeSandboxError, EdgeSandboxCapabilityUnsupportedError, PROVIDER_ID } from "./errors.ts";
export type { EdgeSandboxProviderSettings, NetworkSetting, ServiceConnection } from "./settings.ts";
export type { SandboxBinding } from "../shared/connection.ts";
