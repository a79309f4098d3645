/**
 * `edge-sandbox/exec-hook`: request/response sandboxes for exec hooks, chosen by mode name.
 *
 *   const sandbox = lookupFactory("edge")({ url, token, sandboxId: "hooks" });   // or { binding: env.Sandbox, sandboxId }
 *   const { stdout, error } = await sandbox.spawn({ command: "my-hook", stdin: payload, timeoutMs: 5_000 });
 */
export { registerFactory, replaceFactory, lookupFactory, registeredModes, ExecHookModeError, type ExecHookModes } from "./registry.ts";
export { ExecHookError, ExitError, TimeoutError, TransportError, type ExecHookErrorKind } from "./errors.ts";
export { EdgeExecHookSandbox, edgeExecHookSandbox, type EdgeExecHookConfig } from "./edge.ts";
export { DirectExecHookSandbox, directExecHookSandbox, type DirectExecHookConfig } from "./direct.ts";
export type { ExecHookRequest, ExecHookResponse, ExecHookSandbox, ExecHookSpawnOptions, ExecHookFactory } from "./types.ts";
export type { SandboxConnection, HttpConnection, BindingConnection, SandboxBinding } from "../shared/connection.ts";
