/**
 * Processes on the wire: statuses, records, exec results and the request bodies that create them.
 * Field names follow Cloudflare's Sandbox SDK (ISandbox, ExecResult, ProcessStatus); additions are
 * optional so older clients still parse.
 */
import * as z from "zod";
import { errorResponseSchema } from "./errors.ts";
import { LIMITS } from "./limits.ts";
import { idRoute } from "./route-path.ts";
import { idempotencyKeySchema } from "./idempotency.ts";
import { commandEnvVarsSchema, sessionIdSchema } from "./sessions.ts";
import { withoutNul } from "./validation.ts";
import type { SuccessEnvelope } from "./envelope.ts";
import { lazySchema } from "./lazy-schema.ts";

/** Commands run to completion: buffered, streamed, and a broken stream resumed by the exec's id. */
export const EXEC_ROUTES = {
  execute: "/api/execute",
  stream: "/api/execute/stream",
  resume: idRoute("/api/execute/:id/stream"),
} as const;

/** Background processes. */
export const PROCESS_ROUTES = {
  start: "/api/process/start",
  list: "/api/process/list",
  killAll: "/api/process/kill-all",
  cleanup: "/api/process/cleanup",
  /** GET: every background process with the tail of its log as events (`?bytes=` of output each), for keeping beyond the container. */
  tails: "/api/process/tails",
  /** GET (the record) and DELETE (a signal, `?signal=`). */
  one: idRoute("/api/process/:id"),
  logs: idRoute("/api/process/:id/logs"),
  stream: idRoute("/api/process/:id/stream"),
  stdin: idRoute("/api/process/:id/stdin"),
} as const;

export const PROCESS_STATUSES = ["starting", "running", "completed", "failed", "killed", "error"] as const;
export type ProcessStatus = (typeof PROCESS_STATUSES)[number];
export const TERMINAL_STATUSES: readonly ProcessStatus[] = ["completed", "failed", "killed", "error"];

export function isProcessStatus(value: unknown): value is ProcessStatus {
  return typeof value === "string" && (PROCESS_STATUSES as readonly string[]).includes(value);
}
export function isTerminalStatus(status: ProcessStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/**
 * Whether a finished command or process succeeded: it exited 0 within its time limit. One that was
 * asked to stop and still exited 0 by itself (it trapped the signal) chose its exit code and
 * succeeded; one killed by a signal or its time limit never exits 0. Decided here once: an exec
 * result's `success` and every adapter's follow it.
 */
export function succeeded(end: { exitCode?: number | null; timedOut?: boolean }): boolean {
  return end.exitCode === 0 && end.timedOut !== true;
}

export type OutputEncoding = "utf8" | "base64";
export type OutputStream = "stdout" | "stderr";

const statusSchema = lazySchema(() => z.enum(PROCESS_STATUSES));
const outputEncodingSchema = lazySchema(() => z.enum(["utf8", "base64"]));

/** A process record as every route reports it. Times are ISO strings. */
export const processInfoSchema = lazySchema(() => z.object({
  id: z.string(),
  pid: z.number().int().optional(),
  command: z.string(),
  args: z.array(z.string()).optional(),
  status: statusSchema,
  startTime: z.string().describe("ISO time"),
  endTime: z.string().optional(),
  exitCode: z.number().int().optional(),
  /** Name of the signal that ended the process, when one did. */
  signal: z.string().optional(),
  timedOut: z.boolean().optional(),
  killed: z.boolean().optional(),
  sessionId: z.string().optional(),
  cwd: z.string().optional(),
  /** Why a process is in status `error` (could not start, or lost). */
  error: z.string().optional(),
  /** Total bytes written so far / dropped from retention, per stream. */
  stdoutBytes: z.number().int().optional(),
  stderrBytes: z.number().int().optional(),
  /** Sequence number of the newest log event. */
  lastSeq: z.number().int().optional(),
}));
export type ProcessInfo = z.infer<typeof processInfoSchema>;

/** The container generation of a process handle (the Durable Object's, on the /v1 API). */
export const generationSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(128)
  .describe("Container generation of a process handle: calls fail with STALE_PROCESS_HANDLE once the container restarted"));

/** A process as the Durable Object (and /v1) reports it: the container's record plus its container generation. */
export const processRecordSchema = lazySchema(() => processInfoSchema.extend({ generation: generationSchema }));

export const execResultSchema = lazySchema(() => z.object({
  /** Exit code 0 and not timed out; decided by the container (container/engine/exec.ts), passed on unchanged. */
  success: z.boolean().describe("The command ran to its own end with exit code 0 (not timed out)"),
  exitCode: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  command: z.string(),
  /** Milliseconds from spawn to exit. */
  duration: z.number(),
  /** ISO time the command started. */
  timestamp: z.string(),
  sessionId: z.string().optional(),
  processId: z.string().optional(),
  pid: z.number().int().optional(),
  signal: z.string().optional(),
  timedOut: z.boolean().optional(),
  killed: z.boolean().optional(),
  encoding: outputEncodingSchema.optional(),
  /** True when the buffered stream hit `maxOutputBytes` and its tail was dropped. */
  stdoutTruncated: z.boolean().optional(),
  stderrTruncated: z.boolean().optional(),
}));
export type ExecResult = z.infer<typeof execResultSchema>;

/** An exec that ran out of its time limit answers this error (HTTP status from ERROR_CODES), its result so far as context. */
export const execTimeoutResponseSchema = lazySchema(() => errorResponseSchema.extend({ code: z.literal("EXECUTION_TIMEOUT"), context: execResultSchema }));

export const processLogsSchema = lazySchema(() => z.object({
  processId: z.string(),
  stdout: z.string(),
  stderr: z.string(),
  encoding: outputEncodingSchema.optional(),
  /** Bytes of each stream no longer retained (dropped from the front). */
  stdoutDropped: z.number().int().optional(),
  stderrDropped: z.number().int().optional(),
}));
export const killResultSchema = lazySchema(() => z.object({ processId: z.string(), signal: z.string(), status: statusSchema }));
export const stdinResultSchema = lazySchema(() => z.object({ processId: z.string(), bytesWritten: z.number().int(), closed: z.boolean() }));

// ── request schemas ─────────────────────────────────────────────────────────

const commandSchema = lazySchema(() => withoutNul(z.string().min(1).max(LIMITS.maxCommandLength), "commands"));
const timeoutSchema = lazySchema(() => z.number().int().positive().max(LIMITS.maxTimeoutMs));
const processIdSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(LIMITS.maxProcessIdLength)
  .regex(/^[A-Za-z0-9._:@-]+$/, "process ids use letters, digits and . _ : @ -"));

/** What every way of running a command shares. */
export const commandOptionsSchema = lazySchema(() => z.strictObject({
  args: z.array(withoutNul(z.string(), "arguments")).max(4096).optional(),
  /** On top of the sandbox's and the session's; null unsets a variable for this command. */
  env: commandEnvVarsSchema.optional(),
  cwd: withoutNul(z.string().min(1).max(4096), "paths").optional(),
  /** The session to run in (default: the sandbox's default session; NO_SESSION_ID: none, as `isolated`). */
  sessionId: sessionIdSchema.optional(),
  /** Run from a clean state (the sandbox env, the workspace) and leave nothing behind in any session. */
  isolated: z.boolean().optional(),
  encoding: z.enum(["utf8", "utf-8", "base64"]).optional(),
  /** Time limit in milliseconds (Cloudflare's Sandbox SDK name). */
  timeout: timeoutSchema.optional(),
  /** Time limit in milliseconds (Cloudflare container API name). */
  timeoutMs: timeoutSchema.optional(),
}));

export const execRequestSchema = lazySchema(() => commandOptionsSchema.extend({
  command: commandSchema,
  processId: processIdSchema.optional(),
  idempotencyKey: idempotencyKeySchema.optional(),
  /** Bytes fed to stdin, then EOF (unless keepStdinOpen). Without either, stdin is /dev/null. */
  stdin: z.string().optional(),
  /** Keep stdin open as a pipe (after the `stdin` bytes, if any): write and close it through the process's stdin route. */
  keepStdinOpen: z.boolean().optional(),
  stdinEncoding: z.enum(["utf8", "utf-8", "base64"]).optional(),
  /** Per-stream cap on the buffered result (at most LIMITS.maxExecOutputBytes). */
  maxOutputBytes: z
    .number()
    .int()
    .positive()
    .max(
      LIMITS.maxExecOutputBytes,
      `a buffered result carries at most ${LIMITS.maxExecOutputBytes} bytes per stream; stream larger outputs (execStream, POST /exec/stream)`,
    )
    .optional(),
  /** For /execute/stream: kill the process when the reader goes away (default false). */
  killOnDisconnect: z.boolean().optional(),
}));
export type ExecRequest = z.infer<typeof execRequestSchema>;

const startOptionsSchema = lazySchema(() => commandOptionsSchema.extend({
  processId: processIdSchema.optional(),
  /** false: this process does not keep the sandbox awake (a server left running, a watcher); default true. */
  keepAlive: z.boolean().optional(),
  idempotencyKey: idempotencyKeySchema.optional(),
  autoCleanup: z.boolean().optional(),
  /** Bytes of output retained for late readers (ring buffer). */
  logRetentionBytes: z.number().int().positive().max(LIMITS.maxLogRetentionBytes).optional(),
}));

/**
 * Start body: options nested (`{command, options:{…}}`) or flat, as Cloudflare's container API sends
 * them (`{command, processId, timeoutMs, …}`). Both are accepted; flat fields lose to nested ones.
 */
export const startProcessRequestSchema = lazySchema(() => startOptionsSchema
  .extend({
    command: commandSchema,
    options: startOptionsSchema.optional(),
  })
  .transform(({ options, ...flat }) => ({ ...flat, ...options })));
export type StartProcessRequest = z.output<typeof startProcessRequestSchema>;

export const stdinRequestSchema = lazySchema(() => z.union([
  z.object({ close: z.literal(true) }).strict(),
  z.object({
    data: z.string(),
    encoding: z.enum(["utf8", "utf-8", "base64"]).optional(),
    /** Close stdin after writing this data. */
    close: z.boolean().optional(),
  }).strict(),
]));
export type StdinRequest = z.infer<typeof stdinRequestSchema>;

/**
 * The one signal table: Linux numbers (what a container runs on), used to read a signal given by
 * name ("SIGTERM", "TERM") or number, and to turn a death by signal N into exit code 128+N.
 */
export const SIGNALS: Record<string, number> = {
  SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGBUS: 7, SIGFPE: 8,
  SIGKILL: 9, SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15,
  SIGSTKFLT: 16, SIGCHLD: 17, SIGCONT: 18, SIGSTOP: 19, SIGTSTP: 20, SIGTTIN: 21, SIGTTOU: 22,
  SIGURG: 23, SIGXCPU: 24, SIGXFSZ: 25, SIGVTALRM: 26, SIGPROF: 27, SIGWINCH: 28, SIGIO: 29,
  SIGPWR: 30, SIGSYS: 31,
};

/** The number of a signal named canonically ("SIGTERM"), or undefined for a name not in the table. */
export function signalNumber(name: string): number | undefined {
  return Object.hasOwn(SIGNALS, name) ? SIGNALS[name] : undefined;
}

/** Normalises a signal name or number to its canonical name, or undefined when it is not one. */
export function parseSignal(input: string | number | undefined | null): string | undefined {
  if (input === undefined || input === null || input === "") return "SIGTERM";
  const text = String(input).trim().toUpperCase();
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return Object.entries(SIGNALS).find(([, num]) => num === n)?.[0];
  }
  const name = text.startsWith("SIG") ? text : `SIG${text}`;
  return Object.hasOwn(SIGNALS, name) ? name : undefined;
}

export function normaliseEncoding(encoding: string | undefined): OutputEncoding {
  return encoding === "base64" ? "base64" : "utf8";
}

/** The effective time limit of a request: `timeout` wins over `timeoutMs`. */
export function effectiveTimeout(req: { timeout?: number; timeoutMs?: number }): number | undefined {
  return req.timeout ?? req.timeoutMs;
}

// ── response bodies ─────────────────────────────────────────────────────────

// The envelope is envelope.ts's; the answers of every family wear it, and find it here too.
export { withoutEnvelope, type SuccessEnvelope, type WithoutEnvelope } from "./envelope.ts";
/** The record, and its id, pid and command flat beside it (where Cloudflare's container API puts them). */
export type StartProcessResponse = SuccessEnvelope & { process: ProcessInfo; processId: string; pid?: number; command: string };
export type ListProcessesResponse = SuccessEnvelope & { processes: ProcessInfo[] };
/** An unknown id is a 404 PROCESS_NOT_FOUND, never `{process: null}`. */
export type GetProcessResponse = SuccessEnvelope & { process: ProcessInfo };
export type GetProcessLogsResponse = SuccessEnvelope & z.infer<typeof processLogsSchema>;
/** `POST /api/execute`: the ExecResult itself (its `timestamp` is when the command started). */
export type ExecResponse = ExecResult;
export type KillResponse = SuccessEnvelope & z.infer<typeof killResultSchema>;
/** `cleanedCount` repeats `killed` under the name Cloudflare's container API uses. */
export type KillAllResponse = SuccessEnvelope & { killed: number; cleanedCount: number };
export type CleanupResponse = SuccessEnvelope & { cleaned: number };
export type PingResponse = SuccessEnvelope & {
  status: "ok";
  /** Random id minted when the server booted: a new value means a restarted container. */
  instanceId: string;
  uptimeMs: number;
  version: string;
};
export type StdinResponse = SuccessEnvelope & z.infer<typeof stdinResultSchema>;

// ── /v1 queries ─────────────────────────────────────────────────────────────

const signalQuery = lazySchema(() => z
  .string()
  .regex(/^(SIG)?[A-Za-z0-9]+$/)
  .describe(`Signal name or number, e.g. SIGTERM, TERM or 15 (${Object.keys(SIGNALS).join(", ")})`));

export const generationQuerySchema = lazySchema(() => z.object({ generation: generationSchema.optional() }));
export const killQuerySchema = lazySchema(() => z.object({ signal: signalQuery.optional(), generation: generationSchema.optional() }));
export const killAllQuerySchema = lazySchema(() => z.object({ signal: signalQuery.optional(), sessionId: sessionIdSchema.optional() }));
export const listQuerySchema = lazySchema(() => z.object({ sessionId: sessionIdSchema.optional() }));
