/**
 * `GET /api/info`: what a sandbox is and has (status, resources, isolation), and
 * `GET /api/instructions`: a short plain-text description of it for an agent's tool prompt.
 */
import * as z from "zod";
import { isolationInEffectSchema } from "./isolation.ts";
import { containerWorkSchema } from "./keep-alive.ts";
import type { SuccessEnvelope } from "./process.ts";
import { lazySchema } from "./lazy-schema.ts";

/** `ping`: liveness and the boot id that tells a caller the container was restarted. */
export const INFO_ROUTES = { ping: "/api/ping", info: "/api/info", instructions: "/api/instructions" } as const;

/**
 * Routes that only look at a sandbox: asking them is not using it. They are not open requests, so
 * several callers asking at once (the runtime choosing whom to put to sleep, the Durable Object
 * before a sleep) neither see each other as work nor reset how long the sandbox has been quiet.
 */
export const OBSERVING_ROUTES: ReadonlySet<string> = new Set([INFO_ROUTES.ping, INFO_ROUTES.info]);

export const sandboxResourcesSchema = lazySchema(() => z.object({
  memory: z
    .object({ totalBytes: z.number(), usedBytes: z.number(), availableBytes: z.number(), source: z.enum(["cgroup", "host"]) })
    .describe("Bytes. Within a memory-limited cgroup these are the cgroup's limit and usage"),
  cpus: z.number().describe("CPUs this server may use (a cgroup CPU quota rounds up)"),
  loadAverage: z.tuple([z.number(), z.number(), z.number()]),
  disk: z.object({ path: z.string(), totalBytes: z.number(), usedBytes: z.number(), availableBytes: z.number() }).describe("The filesystem holding the workspace"),
  processes: z
    .object({ current: z.number().int(), max: z.number().int().optional() })
    .optional()
    .describe("Processes and threads of the sandbox's control group and its limit, where the sandbox sees its group"),
}));
export type SandboxResources = z.infer<typeof sandboxResourcesSchema>;

/** What the container server reports about itself (the envelope aside). */
export const serverInfoSchema = lazySchema(() => z.object({
  status: z.literal("ok"),
  instanceId: z.string(),
  version: z.string(),
  uptimeMs: z.number(),
  workspace: z.string(),
  resources: sandboxResourcesSchema,
  isolation: isolationInEffectSchema,
  processes: z.object({ live: z.number().int() }),
  activity: z
    .object({
      openRequests: z.number().int(),
      terminals: z.number().int(),
      quietMs: z.number(),
      work: containerWorkSchema,
      workIdleMs: z.number().describe("For how long nothing of `work` has run (ms, to about a second; 0 while something does)"),
    })
    .describe("Who is using the sandbox now: requests being answered (streams among them), live terminals, and for how long no request has been open (ms; 0 while one is); and the work that keeps it awake"),
  sessions: z.number().int(),
  platform: z.object({ os: z.string(), arch: z.string(), kernel: z.string(), node: z.string() }),
}));
export type InfoResponse = SuccessEnvelope & z.infer<typeof serverInfoSchema>;

export const instructionsSchema = lazySchema(() => z.string().describe("Plain text for an agent's tool prompt: workspace, isolation, network, tools on PATH"));

export type InstructionsResponse = SuccessEnvelope & {
  /** Plain text, a few lines: workspace, isolation, network, tools on PATH. */
  instructions: string;
};
