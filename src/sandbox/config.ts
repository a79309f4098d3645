/**
 * A sandbox's settings as the Durable Object keeps them (in storage, so they outlive both the
 * Durable Object's eviction and the container): sleepAfter, the sandbox env vars (configure() and
 * setEnvVars() both write them) and the isolation the local runtime starts the container with.
 */
import { z } from "zod";
import { ISOLATION_REQUEST_FIELDS, isolationRequestSchema, type IsolationRequest } from "../../protocol/isolation.ts";
import type { IsolationSupport } from "../../protocol/isolation.ts";
import { envVarsSchema } from "../../protocol/sessions.ts";
import { persistenceConfigSchema } from "../../protocol/backups.ts";
import type { SandboxConfig } from "../rpc/sandbox.ts";

export const CONFIG_KEY = "sandbox:config";

/** Longest sleepAfter: a week. Longer is a container kept forever by mistake, not a setting. */
export const MAX_SLEEP_AFTER_SECONDS = 7 * 24 * 3600;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** Seconds of a sleepAfter as Container takes it: a number of seconds, or "30s", "10m", "2h". */
function sleepAfterSeconds(value: string | number): number {
  if (typeof value === "number") return value;
  const unit = value.at(-1)!;
  return unit in UNIT_SECONDS ? Number(value.slice(0, -1)) * UNIT_SECONDS[unit]! : Number(value);
}

/**
 * Checked when saved, so a bad config is refused at once rather than stored to break the sandbox
 * later. Unknown fields are dropped here (the /v1 API refuses them: `.strict()` there).
 */
export const sandboxConfigSchema = z.object({
  sleepAfter: z
    .union([z.string().regex(/^\d+(\.\d+)?[smh]?$/, 'sleepAfter must look like "30s", "10m", "2h" or a number of seconds'), z.number().positive()])
    .refine((value) => sleepAfterSeconds(value) <= MAX_SLEEP_AFTER_SECONDS, "sleepAfter can be at most 7 days (604800 s)")
    .optional(),
  envVars: envVarsSchema.optional(),
  persistence: persistenceConfigSchema.strict().nullable().optional(),
  ...isolationRequestSchema.shape,
});

export function isolationOf(config: SandboxConfig): IsolationRequest {
  const picked: Record<string, unknown> = {};
  for (const field of ISOLATION_REQUEST_FIELDS) if (config[field] !== undefined) picked[field] = config[field];
  return picked as IsolationRequest;
}

export function sameIsolation(a: SandboxConfig, b: SandboxConfig): boolean {
  const left = isolationOf(a);
  const right = isolationOf(b);
  return ISOLATION_REQUEST_FIELDS.every((field) => JSON.stringify(left[field]) === JSON.stringify(right[field]));
}

/** The env vars after an update: values set, nulls removed. */
export function updatedEnv(current: Record<string, string> | undefined, update: Record<string, string | null>): Record<string, string> {
  const next = { ...current };
  for (const [name, value] of Object.entries(update)) {
    if (value === null) delete next[name];
    else next[name] = value;
  }
  return next;
}

/** What a container that already has the wanted vars (`applied`) must be told: new values, and nulls to unset. */
export function envChanges(applied: Record<string, string>, wanted: Record<string, string>): Record<string, string | null> {
  const vars: Record<string, string | null> = {};
  for (const name of Object.keys(applied)) if (!(name in wanted)) vars[name] = null;
  for (const [name, value] of Object.entries(wanted)) if (applied[name] !== value) vars[name] = value;
  return vars;
}

/** detectIsolation() on Cloudflare, where the container is the wall and the isolation options are not used. */
export const PLATFORM_ISOLATION: IsolationSupport = {
  none: { available: true },
  bwrap: { available: false, reason: "on Cloudflare each sandbox is its own container; native isolation is for the local runtime" },
};
