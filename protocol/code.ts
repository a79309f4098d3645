/**
 * The code interpreter on the wire: contexts (a long-lived Python, JavaScript/TypeScript or bash
 * interpreter each, keeping its state between runs), the run request, the events a running cell
 * streams (`start`, `stdout`, `stderr`, `result`, `error`, `complete`), and what a finished run is
 * (Execution). The results of a cell are MIME bundles like Jupyter's.
 *
 *   POST   /api/code/contexts                   {language?, cwd?, env?, sessionId?} → {context}
 *   GET    /api/code/contexts                                                   → {contexts}
 *   GET    /api/code/contexts/{id}                                              → {context}
 *   DELETE /api/code/contexts/{id}                                              → {contextId, cancelled}
 *   POST   /api/code/contexts/{id}/restart      fresh interpreter, same id      → {context}
 *   POST   /api/code/run                        RunCodeRequest                  → Execution
 *   POST   /api/code/run/stream                 RunCodeRequest                  → SSE of CodeEvent
 *   GET    /api/code/executions/{id}/stream     resume after Last-Event-ID      → SSE of CodeEvent
 *   POST   /api/code/executions/{id}/interrupt                                  → {executionId, interrupted}
 *
 * Unknown context ids are 404 CODE_CONTEXT_NOT_FOUND everywhere: a context dies with its container
 * and is never recreated under the same id. Errors in the user's code are not errors of the call:
 * they are the Execution's `error`.
 */
import * as z from "zod";
import { chartSchema } from "./code-chart.ts";
import { idempotencyKeySchema } from "./idempotency.ts";
import { LIMITS } from "./limits.ts";
import type { SuccessEnvelope } from "./process.ts";
import { envNameSchema, envVarsSchema, sessionIdSchema } from "./sessions.ts";
import { idRoute } from "./route-path.ts";
import { lazySchema } from "./lazy-schema.ts";

export const CODE_LANGUAGES = ["python", "javascript", "typescript", "bash"] as const;
export type CodeLanguage = (typeof CODE_LANGUAGES)[number];
/** Short names a caller may give for a language; a context always reports the full one. */
export const CODE_LANGUAGE_ALIASES = { py: "python", js: "javascript", ts: "typescript", sh: "bash" } as const satisfies Record<string, CodeLanguage>;
/** A language as a caller may name it: its full name or an alias. */
export type CodeLanguageName = CodeLanguage | keyof typeof CODE_LANGUAGE_ALIASES;
/** What a context runs when the caller does not say. */
export const DEFAULT_CODE_LANGUAGE: CodeLanguage = "python";

export const CODE_LIMITS = {
  /** Longest cell (characters). */
  maxCodeLength: 1024 * 1024,
  /** Contexts per sandbox: each one is an interpreter process with its own memory. */
  maxContexts: 32,
  /** Runs waiting their turn in one context. */
  maxQueuedRuns: 64,
  /** After an interrupt, how long a cell gets to stop before its interpreter is killed and restarted. */
  interruptGraceMs: 3000,
  /**
   * A streamed run to be interrupted when its reader goes: its stream, when silent, is written to this
   * often. Each hop between the reader and the container (Worker, Durable Object) notices a reader gone
   * only when it writes, so this bounds how late the interrupt comes.
   */
  disconnectProbeMs: 250,
  /** How long an interpreter may take to start and report ready. */
  startTimeoutMs: 30_000,
  /** Bytes of results (images included) a buffered Execution keeps; later results are dropped and flagged. */
  maxResultsBytes: 16 * 1024 * 1024,
} as const;

export const CODE_ROUTES = {
  contexts: "/api/code/contexts",
  /** GET and DELETE. */
  context: idRoute("/api/code/contexts/:id"),
  restart: idRoute("/api/code/contexts/:id/restart"),
  run: "/api/code/run",
  runStream: "/api/code/run/stream",
  executionStream: idRoute("/api/code/executions/:id/stream"),
  interrupt: idRoute("/api/code/executions/:id/interrupt"),
} as const;

/** Context and execution ids: minted by the server, echoed by callers. */
export const codeIdSchema = lazySchema(() => z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:@-]+$/, "ids use letters, digits and . _ : @ -"));

// ── requests ────────────────────────────────────────────────────────────────

/** A language's full name; what contexts report. */
export const codeLanguageSchema = lazySchema(() => z.enum(CODE_LANGUAGES));
/** A language as a caller names it (full name or alias), read as its full name. */
export const codeLanguageNameSchema = lazySchema(() => z
  .enum([...CODE_LANGUAGES, ...(Object.keys(CODE_LANGUAGE_ALIASES) as (keyof typeof CODE_LANGUAGE_ALIASES)[])])
  .transform((name): CodeLanguage => (name in CODE_LANGUAGE_ALIASES ? CODE_LANGUAGE_ALIASES[name as keyof typeof CODE_LANGUAGE_ALIASES] : (name as CodeLanguage))));

export const createCodeContextRequestSchema = lazySchema(() => z.strictObject({
  /** Default python; aliases (py, js, ts, sh) name the same languages. */
  language: codeLanguageNameSchema.optional(),
  /** Starting directory (relative: against the workspace). Default: the session's, else the workspace. */
  cwd: z.string().min(1).max(4096).optional(),
  /** Variables on top of the sandbox's (and the session's) env. */
  env: z.record(envNameSchema, z.string()).optional(),
  /** Start in this session's cwd and env. */
  sessionId: sessionIdSchema.optional(),
}));
export type CreateCodeContextRequest = z.output<typeof createCodeContextRequestSchema>;
/** The request as a caller writes it (a language may be an alias). */
export type CreateCodeContextInput = z.input<typeof createCodeContextRequestSchema>;

export const runCodeRequestSchema = lazySchema(() => z.strictObject({
  code: z.string().max(CODE_LIMITS.maxCodeLength),
  /** The context to run in; without one, the sandbox's default context for `language`. */
  contextId: codeIdSchema.optional(),
  /** Without a context: which default context (default python). With one: must match it. Aliases as for contexts. */
  language: codeLanguageNameSchema.optional(),
  /** Time limit of the cell in milliseconds, from when it starts running: then it is interrupted. */
  timeout: z.number().int().positive().max(LIMITS.maxTimeoutMs).optional(),
  /** When the context is busy: wait for its turn (default), or fail at once with CODE_CONTEXT_BUSY. */
  wait: z.boolean().optional(),
  /** Per-stream cap on the stdout/stderr a buffered Execution keeps (bytes). */
  maxOutputBytes: z.number().int().positive().max(LIMITS.maxExecOutputBytes).optional(),
  /** For /code/run/stream: interrupt the cell when the reader goes away (default false: it runs on). */
  interruptOnDisconnect: z.boolean().optional(),
  /**
   * Variables for this run only, on top of the context's: set while the cell runs (a subprocess it
   * starts inherits them), and put back as they were when it ends.
   */
  env: envVarsSchema.optional(),
  idempotencyKey: idempotencyKeySchema.optional(),
}));
export type RunCodeRequest = z.output<typeof runCodeRequestSchema>;
/** The request as a caller writes it (a language may be an alias). */
export type RunCodeInput = z.input<typeof runCodeRequestSchema>;

// ── what comes back ─────────────────────────────────────────────────────────

export const codeContextSchema = lazySchema(() => z.object({
  id: z.string(),
  language: codeLanguageSchema,
  /** The directory the interpreter started in (a cell may change it; that persists in the context). */
  cwd: z.string(),
  /** ISO time the context was created. */
  createdAt: z.string(),
  sessionId: z.string().optional(),
  /** The sandbox's default context for its language: what runs get without a context. */
  isDefault: z.boolean(),
  /** Cells run since the interpreter (re)started. */
  executionCount: z.number().int(),
}));
export type CodeContext = z.infer<typeof codeContextSchema>;

/**
 * One output of a cell, as a MIME bundle: each format it has, and whether it is the value of the
 * cell's last expression. Binary formats (png, jpeg) are base64; json is the value itself.
 */
export const resultSchema = lazySchema(() => z.object({
  /** text/plain */
  text: z.string().optional(),
  html: z.string().optional(),
  markdown: z.string().optional(),
  svg: z.string().optional(),
  /** image/png, base64 */
  png: z.string().optional(),
  /** image/jpeg, base64 */
  jpeg: z.string().optional(),
  json: z.unknown().optional(),
  latex: z.string().optional(),
  javascript: z.string().optional(),
  /** A matplotlib figure's structure, beside its png (see code-chart.ts). */
  chart: chartSchema.optional(),
  /** The value of the cell's last expression (one per run at most); display() results are not. */
  isMainResult: z.boolean(),
}));
export type Result = z.infer<typeof resultSchema>;
/** The formats a Result may carry, in the order they are listed. */
export const RESULT_FORMATS = ["text", "html", "markdown", "svg", "png", "jpeg", "json", "latex", "javascript", "chart"] as const;
export type ResultFormat = (typeof RESULT_FORMATS)[number];

/** An error the user's code raised, as the language reports it. */
export const executionErrorSchema = lazySchema(() => z.object({
  /** e.g. ZeroDivisionError, NameError, SyntaxError, TypeError, KeyboardInterrupt. */
  name: z.string(),
  /** The error's text (E2B's name for it). */
  value: z.string(),
  /** The same text as `value`, under the name Cloudflare's ExecutionError gives it. */
  message: z.string(),
  /** The lines the language prints for it (a Python traceback, a JS stack). */
  traceback: z.array(z.string()),
}));
export type ExecutionError = z.infer<typeof executionErrorSchema>;
/** An error as an interpreter reports it, before `message` is added. */
export const raisedErrorSchema = lazySchema(() => executionErrorSchema.omit({ message: true }));
export type RaisedError = z.infer<typeof raisedErrorSchema>;

/** The ExecutionError of a reported error: `message` always repeats `value`, whoever built it. */
export function executionError(raised: RaisedError): ExecutionError {
  return { name: raised.name, value: raised.value, message: raised.value, traceback: raised.traceback };
}

/** How a run ended, beyond its results: decided by the container when the cell is over. */
export const executionOutcomeSchema = lazySchema(() => z.object({
  /** The cell's number in its context (from 1 after each restart); 0 when it never ran. */
  executionCount: z.number().int(),
  /** Milliseconds the cell ran (not counting the wait for its turn). */
  duration: z.number(),
  /** Stopped by an interrupt: a caller's, or the time limit's. */
  interrupted: z.boolean().optional(),
  timedOut: z.boolean().optional(),
  /** The interpreter was killed (the cell would not stop, or it died) and restarted: its state is gone. */
  contextRestarted: z.boolean().optional(),
}));
export type ExecutionOutcome = z.infer<typeof executionOutcomeSchema>;

export const executionSchema = lazySchema(() => executionOutcomeSchema.extend({
  /** The cell's code, as Cloudflare's Execution carries it. */
  code: z.string(),
  executionId: z.string(),
  contextId: z.string(),
  language: codeLanguageSchema,
  results: z.array(resultSchema),
  /** Output chunks in the order they came. */
  logs: z.object({ stdout: z.array(z.string()), stderr: z.array(z.string()) }),
  error: executionErrorSchema.optional(),
  /** Output or results went past what the Execution keeps (see maxOutputBytes); the rest was dropped. */
  truncated: z.boolean().optional(),
}));
export type Execution = z.infer<typeof executionSchema>;

interface CodeEventBase {
  timestamp: string;
  /** Position in the run's event log (from 1): the SSE id, for resuming. */
  seq?: number;
}

/**
 * What `/code/run/stream` sends, each the moment it happens. `start` comes first (the run is
 * accepted; it may wait for its turn), `complete` last; `truncated` tells a resuming reader that
 * events it asked for are no longer kept.
 */
export type CodeEvent =
  | (CodeEventBase & { type: "start"; executionId: string; contextId: string; language: CodeLanguage })
  | (CodeEventBase & { type: "stdout" | "stderr"; data: string; offset: number })
  | (CodeEventBase & { type: "result"; result: Result })
  | (CodeEventBase & { type: "error"; error: ExecutionError })
  | (CodeEventBase & { type: "complete" } & ExecutionOutcome)
  | (CodeEventBase & { type: "truncated"; droppedEvents: number; droppedBytes: number });

export type CodeContextResponse = SuccessEnvelope & { context: CodeContext };
export type ListCodeContextsResponse = SuccessEnvelope & { contexts: CodeContext[] };
export const deleteCodeContextResultSchema = lazySchema(() => z.object({
  contextId: z.string(),
  cancelled: z.number().int().describe("Runs that were running or waiting in the context, stopped by the delete"),
}));
export type DeleteCodeContextResponse = SuccessEnvelope & z.infer<typeof deleteCodeContextResultSchema>;
export const interruptCodeResultSchema = lazySchema(() => z.object({
  executionId: z.string(),
  interrupted: z.boolean().describe("False when the run had already finished"),
}));
export type InterruptCodeResponse = SuccessEnvelope & z.infer<typeof interruptCodeResultSchema>;
/** `POST /api/code/run`: the Execution itself. */
export type RunCodeResponse = Execution;
