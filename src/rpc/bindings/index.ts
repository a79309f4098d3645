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
import { networkBindings } from "./network.ts";
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
  ...networkBindings,
} as const satisfies Record<keyof SandboxRpc, Binding>;

export type ApiMethod = keyof typeof API_METHODS;

/** The families, as the API reference groups them (OpenAPI tags, in this order). */
const FAMILIES: readonly { tag: string; description: string; methods: Record<string, Binding> }[] = [
  { tag: "sandbox", description: "The sandbox itself: its state, what it reports, its settings, destroying it", methods: lifecycleBindings },
  { tag: "processes", description: "Commands run to completion or streamed, and background processes with their logs and stdin", methods: processBindings },
  { tag: "sessions", description: "Sessions (a cwd and env kept between commands) and env vars", methods: sessionBindings },
  { tag: "files", description: "Files of the workspace, watching them, and git", methods: fileBindings },
  { tag: "code", description: "The code interpreter: contexts that keep their state, runs buffered or streamed", methods: codeBindings },
  { tag: "terminals", description: "Programs on pseudo-terminals and their viewers' WebSockets", methods: terminalBindings },
  { tag: "ports", description: "Preview ports: a port inside the sandbox at a URL of its own", methods: portBindings },
  { tag: "backups", description: "Snapshots of the workspace in R2, and the workspace as a tar stream", methods: backupBindings },
  { tag: "network", description: "Egress: where the sandbox may connect, secrets injected on the way out, and the audit trail", methods: networkBindings },
];

export const API_TAGS = FAMILIES.map(({ tag, description }) => ({ name: tag, description }));

/** The family a method belongs to, as its OpenAPI tag. */
export function tagOf(method: ApiMethod): string {
  return FAMILIES.find((family) => method in family.methods)!.tag;
}

/** The method names, for wrapping a stub: the table's keys, which the type above holds to the interface's. */
export const SANDBOX_RPC_METHODS = Object.keys(API_METHODS) as (keyof SandboxRpc)[];

/** A method in the table that the interface lacks is a type error here. */
type Extra = Exclude<ApiMethod, keyof SandboxRpc>;
const noExtraMethods: [Extra] extends [never] ? true : Extra = true;
void noExtraMethods;
