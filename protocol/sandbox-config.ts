/**
 * A sandbox's settings as callers give them (getSandbox options, configure(), PATCH /v1/…/config)
 * and the Durable Object keeps them: sleepAfter, the sandbox env vars, a durable workspace, and the
 * isolation the local runtime starts the container with. Checked when saved, so a bad config is
 * refused at once rather than stored to break the sandbox later.
 */
import * as z from "zod";
import { backupQuotaSchema, persistenceConfigSchema } from "./backups.ts";
import { isolationRequestSchema } from "./isolation.ts";
import { durationSchema, durationSeconds } from "./keep-alive.ts";
import { envVarsSchema } from "./sessions.ts";
import { lazySchema } from "./lazy-schema.ts";

/** Longest sleepAfter: a week. Longer is a container kept forever by mistake, not a setting. */
export const MAX_SLEEP_AFTER_SECONDS = 7 * 24 * 3600;

/** Seconds of a sleepAfter as Container takes it: a number of seconds, or "30s", "10m", "2h". */
export const sleepAfterSeconds = durationSeconds;

/**
 * Unknown fields are dropped here (the /v1 API refuses them: `sandboxConfigRequestSchema`). The
 * isolation fields confine commands under the local container runtime, inside the walls its
 * operator set; on Cloudflare the container itself is the wall and they are not used.
 */
export const sandboxConfigSchema = lazySchema(() => z.object({
  sleepAfter: z
    .union([z.string().regex(/^\d+(\.\d+)?[smh]?$/, 'sleepAfter must look like "30s", "10m", "2h" or a number of seconds'), z.number().positive()])
    .refine((value) => sleepAfterSeconds(value) <= MAX_SLEEP_AFTER_SECONDS, "sleepAfter can be at most 7 days (604800 s)")
    .optional()
    .describe('Idle time before the container sleeps, e.g. "10m", "30s" or seconds as a number: no call, no open stream and no work running in it'),
  maxIdle: durationSchema("maxIdle")
    .optional()
    .describe('The longest the container stays awake with no call and no open stream, even while work runs in it (default "1h")'),
  maxLifetime: durationSchema("maxLifetime")
    .nullable()
    .optional()
    .describe("The longest one container runs, busy or not; then it sleeps (saving a durable workspace first). null: unbounded (the default)"),
  keepAlive: z
    .boolean()
    .optional()
    .describe("true: the container does not sleep for idle time, only at a maxIdle or maxLifetime set here, or when destroyed; false turns it off"),
  envVars: envVarsSchema.optional().describe("Environment of the container (replaces the sandbox env vars; applied to the running container too)"),
  persistence: persistenceConfigSchema
    .strict()
    .nullable()
    .optional()
    .describe("A durable workspace saved to the Worker's R2 bucket on sleep and restored at the next start; null turns it off"),
  backupQuota: backupQuotaSchema.nullable().optional().describe("Limits on this sandbox's snapshots (bytes, count); null removes them"),
  ...isolationRequestSchema.shape,
}));

/** The /v1 form: unknown fields are refused. */
export const sandboxConfigRequestSchema = lazySchema(() => sandboxConfigSchema.strict());
