/**
 * Native isolation of the commands a container server runs (used by the local runtime, where no real
 * container wraps the server). The server reads its configuration from these environment variables
 * at start; lists are JSON arrays or colon-separated paths. Asking for an isolation this machine does
 * not offer stops the server with ISOLATION_UNAVAILABLE: there is never a silent downgrade.
 */
import * as z from "zod";
import { lazySchema } from "./lazy-schema.ts";

export const ISOLATION_MODES = ["none", "bwrap"] as const;
export type IsolationMode = (typeof ISOLATION_MODES)[number];

// Declared beside the other variables a server reads as it boots, in a module without zod.
export { ISOLATION_ENV } from "./server-env-names.ts";

export interface IsolationOptions {
  isolation: IsolationMode;
  allowNetwork: boolean;
  readOnlyPaths: string[];
  readWritePaths: string[];
  allowSystemBinaries: boolean;
  bwrapArgs: string[];
}

/** What this machine offers (`detectIsolation()`). */
export const isolationSupportSchema = lazySchema(() => z.object({
  none: z.object({ available: z.literal(true) }),
  bwrap: z.object({ available: z.boolean(), version: z.string().optional(), path: z.string().optional(), reason: z.string().optional() }),
}));
export type IsolationSupport = z.infer<typeof isolationSupportSchema>;

/** The isolation a server applies, as `GET /api/info` reports it. */
export const isolationInEffectSchema = lazySchema(() => z.object({
  mode: z.enum(ISOLATION_MODES),
  allowNetwork: z.boolean(),
  readOnlyPaths: z.array(z.string()),
  readWritePaths: z.array(z.string()),
  allowSystemBinaries: z.boolean(),
  pidNamespace: z.boolean().describe("Commands see only their own processes"),
  version: z.string().optional(),
  /**
   * The sandbox is one long-lived container (its namespaces made when it starts): the server and
   * every command live in it, and what a command leaves running outlives the command.
   */
  container: z.boolean().optional().describe("One long-lived container holds the server and every command"),
  /** A runtime started as root gives each container its own. */
  hostUid: z.number().int().optional().describe("The unprivileged host user the container runs as"),
  limits: z
    .object({ pids: z.number().int(), memoryBytes: z.number(), cpuWeight: z.number().int(), openFiles: z.number().int(), diskBytes: z.number().optional(), enforcedBy: z.string() })
    .optional()
    .describe("What the sandbox may take of the machine, and what enforces it (cgroup v2, cgroup v1, or rlimits)"),
}));
export type IsolationInEffect = z.infer<typeof isolationInEffectSchema>;

/** Absolute paths only: an isolation root is named on the machine that runs the sandbox. */
const isolationPathSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => p.startsWith("/") && !p.includes("\0"), "isolation paths must be absolute"));

/**
 * Isolation asked for by one sandbox (getSandbox options, the /v1 config, the local runtime's start
 * request). Fields left out take the runtime's defaults; `allowNetwork` defaults to false. The
 * runtime's operator policy decides what may be asked (runtime/policy.ts): `bwrapArgs` are accepted
 * here only to be refused there with a clear code.
 */
export const isolationRequestSchema = lazySchema(() => z
  .object({
    isolation: z.enum(ISOLATION_MODES).optional(),
    allowNetwork: z.boolean().optional(),
    readOnlyPaths: z.array(isolationPathSchema).max(64).optional(),
    readWritePaths: z.array(isolationPathSchema).max(64).optional(),
    allowSystemBinaries: z.boolean().optional(),
    bwrapArgs: z.array(z.string().max(4096)).max(256).optional(),
  })
  .strict());
export type IsolationRequest = z.output<typeof isolationRequestSchema>;

/** The fields of IsolationRequest, for picking them out of a wider options object. */
export const ISOLATION_REQUEST_FIELDS = [
  "isolation",
  "allowNetwork",
  "readOnlyPaths",
  "readWritePaths",
  "allowSystemBinaries",
  "bwrapArgs",
] as const satisfies readonly (keyof IsolationRequest)[];
