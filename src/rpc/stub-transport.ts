/**
 * A Durable Object stub as a SandboxRpc: every call goes over Workers RPC, and an error coming back
 * (which RPC reduces to name + message) is rebuilt into its SandboxError class. The Worker's /v1
 * routes and getSandbox() both reach the Sandbox Durable Object through it.
 */
import { errorFromResponse } from "./error-response.ts";
import { fromRpcError } from "./rpc-errors.ts";
import { terminalSocketRequest } from "./terminals.ts";
import { SANDBOX_RPC_METHODS } from "./bindings/index.ts";
import type { SandboxRpc } from "./sandbox-rpc.ts";

type AnyMethod = (...args: unknown[]) => Promise<unknown>;

/** `before` runs ahead of every call (getSandbox sends the sandbox's settings with it, once). */
export function rpcTransport(stub: object, before?: () => Promise<void>): SandboxRpc {
  const target = stub as Record<string, AnyMethod>;
  const transport: Partial<Record<keyof SandboxRpc, AnyMethod>> = {};
  for (const name of SANDBOX_RPC_METHODS) {
    transport[name] = async (...args: unknown[]) => {
      try {
        if (before) await before();
        return await target[name]!(...args);
      } catch (error) {
        throw fromRpcError(error);
      }
    };
  }
  // Workers RPC cannot carry a WebSocket: the upgrade goes through the stub's fetch handler.
  transport.connectTerminal = async (...args: unknown[]) => {
    const [id, request] = args as [string, Request];
    try {
      if (before) await before();
      const response = await (stub as { fetch(request: Request): Promise<Response> }).fetch(terminalSocketRequest(id, request));
      if (response.status !== 101) throw await errorFromResponse(response);
      return response;
    } catch (error) {
      throw fromRpcError(error);
    }
  };
  return transport as unknown as SandboxRpc;
}
