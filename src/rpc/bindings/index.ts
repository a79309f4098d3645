/**
 * Every SandboxRpc method's HTTP binding, one table made of the families' declarations. The /v1
 * routes, the OpenAPI operations, the HTTP client's calls and the RPC method list are derived from it.
 */
import type { SandboxRpc } from "../sandbox-rpc.ts";
import type { Binding } from "./binding.ts";
import { backupBindings } from "./backups.ts";
import { codeBindings } from "./code.ts";
import { fileBindings } from "./files.ts";
import { lifecycleBindings } from "./lifecycle.ts";
import { portBindings } from "./ports.ts";
import { processBindings } from "./processes.ts";
import { sessionBindings } from "./sessions.ts";
import { terminalBindings } from "./terminals.ts";

export const API_METHODS = {
  ...processBindings,
  ...sessionBindings,
  ...fileBindings,
  ...codeBindings,
  ...terminalBindings,
  ...portBindings,
  ...lifecycleBindings,
  ...backupBindings,
} as const satisfies Record<keyof SandboxRpc, Binding>;

export type ApiMethod = keyof typeof API_METHODS;

/** The method names, for wrapping a stub: the table's keys, which the type above holds to the interface's. */
export const SANDBOX_RPC_METHODS = Object.keys(API_METHODS) as (keyof SandboxRpc)[];

/** A method in the table that the interface lacks is a type error here. */
type Extra = Exclude<ApiMethod, keyof SandboxRpc>;
const noExtraMethods: [Extra] extends [never] ? true : Extra = true;
void noExtraMethods;
