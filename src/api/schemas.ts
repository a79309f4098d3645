/**
 * Schemas of the /v1 API beyond the protocol's request bodies: query parameters and response
 * bodies. Routes validate with them and the OpenAPI document is generated from them.
 */
import { z } from "zod";
import { PROCESS_STATUSES, SIGNALS } from "../../protocol/process.ts";
import { ERROR_CODES } from "../../protocol/errors.ts";

const signal = z
  .string()
  .regex(/^(SIG)?[A-Za-z0-9]+$/)
  .describe(`Signal name or number, e.g. SIGTERM, TERM or 15 (${Object.keys(SIGNALS).join(", ")})`);

const generation = z
  .string()
  .min(1)
  .max(128)
  .describe("Container generation of a process handle: calls fail with STALE_PROCESS_HANDLE once the container restarted");

export const generationQuery = z.object({ generation: generation.optional() });
export const killQuery = z.object({ signal: signal.optional(), generation: generation.optional() });
export const killAllQuery = z.object({ signal: signal.optional(), sessionId: z.string().min(1).max(128).optional() });
export const listQuery = z.object({ sessionId: z.string().min(1).max(128).optional() });
export const logStreamQuery = z.object({
  since: z
    .string()
    .regex(/^\d+$/, "since is an event id (a whole number)")
    .optional()
    .describe("Resume after this event id (Last-Event-ID header wins)"),
  generation: generation.optional(),
});
export const configRequestSchema = z
  .object({
    sleepAfter: z.union([z.string().regex(/^\d+(\.\d+)?[smh]?$/), z.number().positive()]).optional(),
    envVars: z.record(z.string(), z.string()).optional(),
  })
  .strict();

// ── responses ──────────────────────────────────────────────────────────────

const status = z.enum(PROCESS_STATUSES);
const encoding = z.enum(["utf8", "base64"]);

export const processRecordSchema = z.object({
  id: z.string(),
  pid: z.number().int().optional(),
  command: z.string(),
  args: z.array(z.string()).optional(),
  status,
  startTime: z.string().describe("ISO time"),
  endTime: z.string().optional(),
  exitCode: z.number().int().optional(),
  signal: z.string().optional(),
  timedOut: z.boolean().optional(),
  killed: z.boolean().optional(),
  sessionId: z.string().optional(),
  cwd: z.string().optional(),
  error: z.string().optional(),
  stdoutBytes: z.number().int().optional(),
  stderrBytes: z.number().int().optional(),
  lastSeq: z.number().int().optional(),
  generation,
});

export const execResultSchema = z.object({
  success: z.boolean().describe("exit code 0"),
  exitCode: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  command: z.string(),
  duration: z.number(),
  timestamp: z.string(),
  sessionId: z.string().optional(),
  processId: z.string().optional(),
  pid: z.number().int().optional(),
  signal: z.string().optional(),
  timedOut: z.boolean().optional(),
  killed: z.boolean().optional(),
  encoding: encoding.optional(),
  stdoutTruncated: z.boolean().optional(),
  stderrTruncated: z.boolean().optional(),
});

export const processResponseSchema = z.object({ process: processRecordSchema });
export const processListResponseSchema = z.object({ processes: z.array(processRecordSchema) });
export const processLogsSchema = z.object({
  processId: z.string(),
  stdout: z.string(),
  stderr: z.string(),
  encoding: encoding.optional(),
  stdoutDropped: z.number().int().optional(),
  stderrDropped: z.number().int().optional(),
});
export const killResultSchema = z.object({ processId: z.string(), signal: z.string(), status });
export const killAllResultSchema = z.object({ killed: z.number().int() });
export const cleanupResultSchema = z.object({ cleaned: z.number().int() });
export const stdinResultSchema = z.object({ processId: z.string(), bytesWritten: z.number().int(), closed: z.boolean() });
export const sandboxInfoSchema = z.object({
  generation: z.string(),
  generationNumber: z.number().int(),
  containerStartedAt: z.string(),
  sleepAfter: z.string(),
});
export const errorResponseSchema = z.object({
  success: z.literal(false),
  code: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]]),
  message: z.string(),
  httpStatus: z.number().int(),
  timestamp: z.string(),
  context: z.record(z.string(), z.unknown()).optional(),
});
