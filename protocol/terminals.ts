/**
 * Terminals on the wire: a program on a pseudo-terminal, kept as a resource that outlives any one
 * viewer. Its output (one byte stream: a PTY merges stdout and stderr) goes to a bounded log whose
 * cursor is the seq of the last entry a viewer has; a viewer that reconnects with that cursor gets
 * exactly what it missed. Requests, records, and the control frames of the WebSocket live here.
 */
import * as z from "zod";
import type { ErrorCode } from "./errors.ts";
import { envVarsSchema, sessionIdSchema } from "./sessions.ts";
import { withoutNul } from "./validation.ts";
import { idRoute } from "./route-path.ts";
import { lazySchema } from "./lazy-schema.ts";

/** Bounds of a terminal's size: what a PTY accepts and what a screen plausibly has. */
export const TERMINAL_LIMITS = {
  minSize: 1,
  maxCols: 1000,
  maxRows: 500,
  defaultCols: 80,
  defaultRows: 24,
  /** Output kept per terminal for viewers that reconnect. */
  retentionBytes: 1024 * 1024,
  /** Most input one write takes, in bytes. */
  maxWriteBytes: 1024 * 1024,
} as const;

export const TERMINAL_RUN_STATUSES = ["running", "exited"] as const;
export type TerminalStatus = (typeof TERMINAL_RUN_STATUSES)[number];

const colsSchema = lazySchema(() => z.number().int().min(TERMINAL_LIMITS.minSize).max(TERMINAL_LIMITS.maxCols));
const rowsSchema = lazySchema(() => z.number().int().min(TERMINAL_LIMITS.minSize).max(TERMINAL_LIMITS.maxRows));

export const terminalIdSchema = lazySchema(() => z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, _ and - (1 to 64)"));

export const createTerminalRequestSchema = lazySchema(() => z.strictObject({
  /** A command line run by the shell; default: the login shell (`bash -l`). */
  command: withoutNul(z.string().min(1), "command").optional(),
  cwd: withoutNul(z.string().min(1), "cwd").optional(),
  env: envVarsSchema.optional(),
  cols: colsSchema.default(TERMINAL_LIMITS.defaultCols),
  rows: rowsSchema.default(TERMINAL_LIMITS.defaultRows),
  /** The session whose cwd and env the terminal starts from (default: the default session). */
  sessionId: sessionIdSchema.optional(),
  /** Start from a clean state (the sandbox env, the workspace) instead. */
  isolated: z.boolean().optional(),
  terminalId: terminalIdSchema.optional(),
}));
export type CreateTerminalRequest = z.input<typeof createTerminalRequestSchema>;

export const resizeTerminalRequestSchema = lazySchema(() => z.strictObject({ cols: colsSchema, rows: rowsSchema }));
export type ResizeTerminalRequest = z.infer<typeof resizeTerminalRequestSchema>;

/** Input is text (UTF-8) or base64 bytes. */
export const writeTerminalRequestSchema = lazySchema(() => z.strictObject({
  data: z.string().max(Math.ceil(TERMINAL_LIMITS.maxWriteBytes * 4 / 3) + 4),
  encoding: z.enum(["utf8", "base64"]).default("utf8"),
}));
export type WriteTerminalRequest = z.input<typeof writeTerminalRequestSchema>;

export const terminalInfoSchema = lazySchema(() => z.object({
  id: z.string(),
  pid: z.number().int(),
  command: z.string(),
  cols: z.number().int(),
  rows: z.number().int(),
  status: z.enum(TERMINAL_RUN_STATUSES),
  startTime: z.string(),
  endTime: z.string().optional(),
  exitCode: z.number().int().optional(),
  signal: z.string().optional().describe("Name of the signal that ended the program, when one did"),
  sessionId: z.string().optional(),
  cursor: z.number().int().describe("Seq of the newest output entry: pass it as `since` to read only what comes after"),
}));
export type TerminalInfo = z.infer<typeof terminalInfoSchema>;

/** `GET /api/terminals/:id/output?since=`: retained output after a cursor, as base64. */
export const terminalOutputSchema = lazySchema(() => z.object({
  terminalId: z.string(),
  data: z.string().describe("Base64 bytes of the output after `since`"),
  cursor: z.number().int().describe("Pass it as `since` next time"),
  droppedBytes: z.number().int().describe("Output after `since` that is no longer kept"),
  status: z.enum(TERMINAL_RUN_STATUSES),
  exitCode: z.number().int().optional(),
}));
export type TerminalOutput = z.infer<typeof terminalOutputSchema>;

export const terminalIdResultSchema = lazySchema(() => z.object({ terminalId: z.string() }));
export type TerminalIdResult = z.infer<typeof terminalIdResultSchema>;
export const terminalWriteResultSchema = lazySchema(() => z.object({ terminalId: z.string(), bytes: z.number().int() }));
export type TerminalWriteResult = z.infer<typeof terminalWriteResultSchema>;
export const terminalKillResultSchema = lazySchema(() => z.object({ terminalId: z.string(), signal: z.string() }));
export type TerminalKillResult = z.infer<typeof terminalKillResultSchema>;
/** `kill`'s query. */
export const terminalKillQuerySchema = lazySchema(() => z.object({ signal: z.string().optional().describe("Default SIGTERM (SIGKILL after the grace period)") }));
/** `output`'s query (the /v1 form: absent is from the start). */
export const terminalOutputQuerySchema = lazySchema(() => z.object({ since: z.coerce.number().int().min(0).optional().describe("A cursor (default 0: from the start)") }));

export const terminalSinceSchema = lazySchema(() => z.object({ since: z.coerce.number().int().min(0).default(0) }));

/** How a socket may use its terminal: "interactive" (default) sends input and resizes; "view" only watches. */
export const TERMINAL_SOCKET_MODES = ["interactive", "view"] as const;
export type TerminalSocketMode = (typeof TERMINAL_SOCKET_MODES)[number];
export const terminalSocketModeSchema = lazySchema(() => z.enum(TERMINAL_SOCKET_MODES));
/** Query of the terminal's WebSocket: where to start, and how it may be used. */
export const terminalSocketQuerySchema = lazySchema(() => terminalSinceSchema.extend({ mode: terminalSocketModeSchema.default("interactive") }));

/** True when a request asks for a WebSocket: a terminal's socket routes answer anything else with 426. */
export function isWebSocketUpgrade(request: Request): boolean {
  return request.headers.get("upgrade")?.toLowerCase() === "websocket";
}
export const WEBSOCKET_UPGRADE_MESSAGE = "a terminal is reached over a WebSocket: send Upgrade: websocket";

/** Text frames of the WebSocket. Binary frames carry output (server → client) and input (client → server). */
export type TerminalServerFrame =
  /** Once per connection, when the output asked for has been sent: what is typed from now on is taken. */
  | { type: "ready" }
  | { type: "exit"; exitCode?: number; signal?: string; cursor: number }
  | { type: "truncated"; droppedBytes: number }
  | { type: "cursor"; cursor: number }
  /** Input or a frame the server could not take (after the exit, or malformed); the socket stays open. */
  | { type: "error"; message: string; code?: ErrorCode };

export const terminalClientFrameSchema = lazySchema(() => z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("resize"), cols: colsSchema, rows: rowsSchema }),
]));
export type TerminalClientFrame = z.infer<typeof terminalClientFrameSchema>;

const terminalSocket = idRoute("/api/terminals/:id/ws");

export const TERMINAL_ROUTES = {
  list: "/api/terminals",
  /** GET and DELETE. */
  one: idRoute("/api/terminals/:id"),
  output: idRoute("/api/terminals/:id/output"),
  write: idRoute("/api/terminals/:id/write"),
  resize: idRoute("/api/terminals/:id/resize"),
  interrupt: idRoute("/api/terminals/:id/interrupt"),
  kill: idRoute("/api/terminals/:id/kill"),
  wait: idRoute("/api/terminals/:id/wait"),
  /** The viewer's WebSocket (an upgrade, not a route of the router). */
  socket: terminalSocket,
  ws: (id: string, since?: number, mode?: TerminalSocketMode) => {
    const query = new URLSearchParams();
    if (since !== undefined) query.set("since", String(since));
    if (mode === "view") query.set("mode", mode);
    return `${terminalSocket(id)}${query.size === 0 ? "" : `?${query}`}`;
  },
} as const;
