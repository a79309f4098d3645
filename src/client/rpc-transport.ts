/**
 * The Durable Object stub as a SandboxRpc: every call goes over Workers RPC, and an error coming
 * back (which RPC reduces to name + message) is rebuilt into its SandboxError class.
 */
import { fromRpcError } from "./errors.ts";
import type { SandboxRpc } from "./types.ts";

const METHODS = [
  "exec",
  "execStream",
  "startProcess",
  "listProcesses",
  "getProcess",
  "killProcess",
  "killAllProcesses",
  "streamProcessLogs",
  "getProcessLogs",
  "cleanupCompletedProcesses",
  "writeStdin",
  "closeStdin",
  "createSession",
  "getSession",
  "listSessions",
  "deleteSession",
  "setEnvVars",
  "writeFile",
  "writeFileStream",
  "readFile",
  "readFileStream",
  "mkdir",
  "deleteFile",
  "renameFile",
  "moveFile",
  "listFiles",
  "exists",
  "configure",
  "info",
  "getInfo",
  "getInstructions",
  "detectIsolation",
  "destroy",
] as const satisfies readonly (keyof SandboxRpc)[];

type AnyMethod = (...args: unknown[]) => Promise<unknown>;

export function rpcTransport(stub: object, before?: () => Promise<void>): SandboxRpc {
  const target = stub as Record<string, AnyMethod>;
  const transport: Partial<Record<keyof SandboxRpc, AnyMethod>> = {};
  for (const name of METHODS) {
    transport[name] = async (...args: unknown[]) => {
      try {
        if (before) await before();
        return await target[name]!(...args);
      } catch (error) {
        throw fromRpcError(error);
      }
    };
  }
  return transport as unknown as SandboxRpc;
}
