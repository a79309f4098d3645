/**
 * Every SandboxRpc method's HTTP binding, one table made of the families' declarations. The /v1
 * routes, the OpenAPI operations and the HTTP client's calls are derived from it.
 */
import type { SandboxRpc } from "../sandbox-rpc.ts";
import type { Binding } from "./binding.ts";
import { fileBindings } from "./files.ts";
import { processBindings } from "./processes.ts";
import { sessionBindings } from "./sessions.ts";

export const API_METHODS = {
  ...processBindings,
  ...sessionBindings,
  ...fileBindings,
} as const satisfies Partial<Record<keyof SandboxRpc, Binding>>;

export type ApiMethod = keyof typeof API_METHODS;
