/**
 * What keeps a sandbox awake. Calls and open streams always have; so does work inside it that
 * nobody is watching: a running process (unless started with `keepAlive: false`), a code cell, a
 * live terminal, a request the container is answering (a clone, a save, a preview WebSocket). Two
 * ceilings bound what that costs: `maxIdle`, the longest it stays awake with no call and no open
 * stream whatever runs in it, and `maxLifetime`, the longest one container runs at all. The
 * container reports its work (`GET /api/info` `activity.work`); the Durable Object decides, and
 * `getInfo()` says why it is awake and when it will sleep.
 */
import * as z from "zod";
import { lazySchema } from "./lazy-schema.ts";

/** Longest ceiling: a week, like sleepAfter. */
export const MAX_KEEP_ALIVE_SECONDS = 7 * 24 * 3600;

/** Defaults: a sandbox nobody calls sleeps within an hour even while work runs; a container's life is not bounded. */
export const KEEP_ALIVE_DEFAULTS = { maxIdle: "1h" } as const;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** Seconds of a duration as sleepAfter takes it: a number of seconds, or "30s", "10m", "2h". */
export function durationSeconds(value: string | number): number {
  if (typeof value === "number") return value;
  const unit = value.at(-1)!;
  return unit in UNIT_SECONDS ? Number(value.slice(0, -1)) * UNIT_SECONDS[unit]! : Number(value);
}

/** A duration field of the sandbox config ("30s", "10m", "2h", or seconds), at most a week. */
export function durationSchema(name: string) {
  return z
    .union([z.string().regex(/^\d+(\.\d+)?[smh]?$/, `${name} must look like "30s", "10m", "2h" or a number of seconds`), z.number().positive()])
    .refine((value) => durationSeconds(value) > 0 && durationSeconds(value) <= MAX_KEEP_ALIVE_SECONDS, `${name} must be more than 0 and at most 7 days (604800 s)`);
}

/** The work a container reports (`activity.work`): what runs in it now. */
export const containerWorkSchema = lazySchema(() => z.object({
  processes: z.number().int().describe("Live processes that keep the sandbox awake (all but those started with keepAlive: false)"),
  codeCells: z.number().int().describe("Code cells running or waiting their turn"),
  terminals: z.number().int().describe("Terminals whose program runs"),
  requests: z.number().int().describe("Requests the container is answering, streams and preview WebSockets among them"),
}));
export type ContainerWork = z.infer<typeof containerWorkSchema>;

export const KEEP_ALIVE_REASONS = ["streams", "processes", "codeCells", "terminals", "requests"] as const;
export type KeepAliveReason = (typeof KEEP_ALIVE_REASONS)[number];

export const keepAliveStatusSchema = lazySchema(() => z.object({
  reasons: z
    .array(z.object({ kind: z.enum(KEEP_ALIVE_REASONS), count: z.number().int() }))
    .describe("What keeps the sandbox awake now: open streams through the Durable Object, and the container's work. Empty: it sleeps once idle for sleepAfter"),
  lastActivityAt: z.string().describe("The last call, or the end of the last stream (ISO)"),
  sleepsAt: z
    .string()
    .nullable()
    .describe("When it will sleep if nothing changes (ISO); null while work or keepAlive keeps it awake with no ceiling ahead"),
  why: z
    .enum(["idle", "maxIdle", "maxLifetime"])
    .nullable()
    .describe("What sleepsAt comes from: sleepAfter of idle time, the maxIdle ceiling, or the maxLifetime ceiling"),
  sleepAfter: z.string(),
  maxIdle: z.string().nullable().describe("null: no such ceiling (keepAlive without a maxIdle set)"),
  maxLifetime: z.string().nullable().describe("null: a container's life is not bounded"),
  keepAlive: z.boolean().describe("Set: it does not sleep for idle time, only at a ceiling or when destroyed"),
}));
export type KeepAliveStatus = z.infer<typeof keepAliveStatusSchema>;
