/**
 * What a sandbox reports about itself through the Durable Object: its generation (`info()`), and
 * with it what its container server reports, how the last start went and its durable workspace
 * (`getInfo()`). The /v1 answers add the sandbox's id.
 */
import * as z from "zod";
import { persistenceStatusSchema } from "./backups.ts";
import { serverInfoSchema } from "./info.ts";
import { keepAliveStatusSchema } from "./keep-alive.ts";
import { lazySchema } from "./lazy-schema.ts";

export const sandboxInfoSchema = lazySchema(() => z.object({
  generation: z.string().describe("The container generation now running (its instance id)"),
  generationNumber: z.number().int().describe("How many containers this sandbox has started so far, counting this one"),
  containerStartedAt: z.string(),
  sleepAfter: z.string(),
}));
export type SandboxInfo = z.infer<typeof sandboxInfoSchema>;

/** How the last container start went, when this sandbox's Durable Object started it. */
export const startupTimingSchema = lazySchema(() => z.object({
  startedAt: z.string().describe("When the start was asked for (ISO)"),
  readyMs: z.number().describe("From the start request until the container server answered a readiness probe"),
  probes: z.number().int().describe("Readiness probes sent until one was answered"),
}));
export type StartupTiming = z.infer<typeof startupTimingSchema>;

export const sandboxDetailsSchema = lazySchema(() => sandboxInfoSchema.extend({
  ...serverInfoSchema.omit({ instanceId: true }).shape,
  startup: startupTimingSchema.optional(),
  persistence: persistenceStatusSchema,
  keepAlive: keepAliveStatusSchema.describe("Why the sandbox is awake and when it will sleep"),
}));
export type SandboxDetails = z.infer<typeof sandboxDetailsSchema>;

/** `status()`: whether the sandbox's container runs now, asked without starting it. */
export const sandboxStatusSchema = lazySchema(() => z.object({
  running: z.boolean(),
  asleep: z.boolean().describe("Its container ran and was put to sleep (not destroyed): the next call starts it again"),
}));
export type SandboxStatus = z.infer<typeof sandboxStatusSchema>;

/** The /v1 answers: the same, with the sandbox's id. */
export const sandboxIdentitySchema = lazySchema(() => z.object({ id: z.string() }));
