/**
 * Schemas of the /v1 API beyond the protocol's request bodies: query parameters and response
 * bodies. Routes validate with them and the OpenAPI document is generated from them.
 */
import { z } from "zod";
import { FILE_LIMITS } from "../../protocol/files.ts";
import { ISOLATION_MODES } from "../../protocol/isolation.ts";
import { PROCESS_STATUSES, SIGNALS } from "../../protocol/process.ts";
import { resumeQuerySchema } from "../../protocol/resume.ts";
import { codeContextSchema } from "../../protocol/code.ts";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { sessionIdSchema } from "../../protocol/sessions.ts";
import { sandboxConfigSchema } from "../sandbox/config.ts";

export {
  generationQuerySchema as generationQuery,
  killAllQuerySchema as killAllQuery,
  killQuerySchema as killQuery,
  listQuerySchema as listQuery,
  streamQuerySchema as streamQuery,
} from "../../protocol/process.ts";
/** Settings; the isolation fields apply under the local container runtime (on Cloudflare the container is the wall). */
export const configRequestSchema = sandboxConfigSchema.strict();
/** `GET /files/content?path=…` */
export const fileQuery = z.object({ path: z.string().min(1).max(FILE_LIMITS.maxPathLength).describe("File path (relative: in the workspace)") });

// ── responses ──────────────────────────────────────────────────────────────

export const sandboxInfoSchema = z.object({
  generation: z.string(),
  generationNumber: z.number().int(),
  containerStartedAt: z.string(),
  sleepAfter: z.string(),
});

export const sandboxDetailsSchema = sandboxInfoSchema.extend({
  status: z.literal("ok"),
  version: z.string(),
  uptimeMs: z.number(),
  workspace: z.string(),
  resources: z.object({
    memory: z.object({ totalBytes: z.number(), usedBytes: z.number(), availableBytes: z.number(), source: z.enum(["cgroup", "host"]) }),
    cpus: z.number(),
    loadAverage: z.array(z.number()),
    disk: z.object({ path: z.string(), totalBytes: z.number(), usedBytes: z.number(), availableBytes: z.number() }),
    processes: z.object({ current: z.number().int(), max: z.number().int().optional() }).optional(),
  }),
  isolation: z.object({
    mode: z.enum(ISOLATION_MODES),
    allowNetwork: z.boolean(),
    readOnlyPaths: z.array(z.string()),
    readWritePaths: z.array(z.string()),
    allowSystemBinaries: z.boolean(),
    pidNamespace: z.boolean(),
    version: z.string().optional(),
    container: z.boolean().optional().describe("One long-lived container holds the server and every command"),
    hostUid: z.number().int().optional().describe("The unprivileged host user the container runs as"),
    limits: z
      .object({ pids: z.number().int(), memoryBytes: z.number(), cpuWeight: z.number().int(), openFiles: z.number().int(), enforcedBy: z.string() })
      .optional(),
  }),
  processes: z.object({ live: z.number().int() }),
  activity: z.object({ openRequests: z.number().int(), terminals: z.number().int(), quietMs: z.number() }).optional(),
  sessions: z.number().int(),
  platform: z.object({ os: z.string(), arch: z.string(), kernel: z.string(), node: z.string() }),
});
export const instructionsSchema = z.object({ instructions: z.string().describe("Plain text for an agent's tool prompt") });
export const isolationSupportSchema = z.object({
  none: z.object({ available: z.literal(true) }),
  bwrap: z.object({ available: z.boolean(), version: z.string().optional(), path: z.string().optional(), reason: z.string().optional() }),
});

export const codeContextResponseSchema = z.object({ context: codeContextSchema });
export const codeContextListSchema = z.object({ contexts: z.array(codeContextSchema) });
export const codeContextDeletedSchema = z.object({
  contextId: z.string(),
  cancelled: z.number().int().describe("Runs that were running or waiting in the context, stopped by the delete"),
});
export const codeInterruptedSchema = z.object({
  executionId: z.string(),
  interrupted: z.boolean().describe("False when the run had already finished"),
});

export const errorResponseSchema = z.object({
  success: z.literal(false),
  code: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]]),
  message: z.string(),
  httpStatus: z.number().int(),
  timestamp: z.string(),
  context: z.record(z.string(), z.unknown()).optional(),
});

const terminalSchema = z.object({
  id: z.string(),
  pid: z.number().int(),
  command: z.string(),
  cols: z.number().int(),
  rows: z.number().int(),
  status: z.enum(["running", "exited"]),
  startTime: z.string(),
  endTime: z.string().optional(),
  exitCode: z.number().int().optional(),
  signal: z.string().optional(),
  sessionId: z.string().optional(),
  cursor: z.number().int().describe("Seq of the newest output entry: pass it as `since` to read only what comes after"),
});
export const terminalResponseSchema = z.object({ terminal: terminalSchema });
export const terminalListSchema = z.object({ terminals: z.array(terminalSchema) });
export const terminalOutputSchema = z.object({
  terminalId: z.string(),
  data: z.string().describe("Base64 bytes of the output after `since`"),
  cursor: z.number().int(),
  droppedBytes: z.number().int().describe("Output after `since` that is no longer kept"),
  status: z.enum(["running", "exited"]),
  exitCode: z.number().int().optional(),
});
export const terminalSinceQuery = z.object({ since: z.string().optional().describe("A cursor (default 0: from the start)") });
export const terminalIdResultSchema = z.object({ terminalId: z.string() });
export const terminalWriteResultSchema = z.object({ terminalId: z.string(), bytes: z.number().int() });
export const terminalKillResultSchema = z.object({ terminalId: z.string(), signal: z.string() });
export const terminalKillQuery = z.object({ signal: z.string().optional().describe("Default SIGTERM (SIGKILL after the grace period)") });

const exposedPortSchema = z.object({
  port: z.number().int(),
  url: z.string().describe("The preview URL; a private port's carries its token once (?token=)"),
  name: z.string().optional(),
  public: z.boolean(),
  exposedAt: z.string(),
});
export const exposedPortResponseSchema = exposedPortSchema;
export const exposedPortListSchema = z.object({ ports: z.array(exposedPortSchema) });
export const unexposedPortSchema = z.object({ port: z.number().int() });
