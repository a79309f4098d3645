/**
 * Signed stream URLs on the wire: what a caller with the API token asks for, and what it gets back,
 * to hand a stream to a browser. `EventSource` and a browser `WebSocket` cannot send an
 * Authorization header, so the URL itself carries the grant: one stream (method and path) of one
 * sandbox, until `expiresAt`. The Worker signs and checks them (src/api/stream-url.ts).
 */
import * as z from "zod";
import { terminalSocketModeSchema } from "./terminals.ts";
import { lazySchema } from "./lazy-schema.ts";

/** How long a signed stream URL lives. A stream opened before the expiry stays open after it. */
export const STREAM_URL_LIMITS = {
  defaultTtlSeconds: 300,
  /** An hour: long enough for a page to reconnect a dropped stream, short enough that a leaked URL soon stops working. */
  maxTtlSeconds: 3600,
} as const;

export const streamUrlTtlSchema = lazySchema(() => z
  .number()
  .int()
  .min(1)
  .max(STREAM_URL_LIMITS.maxTtlSeconds)
  .describe(`Seconds the URL stays good (default ${STREAM_URL_LIMITS.defaultTtlSeconds}, at most ${STREAM_URL_LIMITS.maxTtlSeconds})`));

/** Body of the routes that mint a stream URL (may be empty). */
export const streamUrlRequestSchema = lazySchema(() => z.strictObject({
  ttlSeconds: streamUrlTtlSchema.optional(),
}));
export type StreamUrlRequest = z.output<typeof streamUrlRequestSchema>;

/** Body of POST /terminals/:tid/ws-url: `mode: "view"` mints a socket that receives output and takes no input or resize. */
export const terminalUrlRequestSchema = lazySchema(() => streamUrlRequestSchema.extend({ mode: terminalSocketModeSchema.optional() }));

/**
 * Query parameters a URL may carry as part of its grant, signed with it (removing or changing one
 * voids the signature): `run`, the one run of a process the URL reads (a later process with the
 * same id is another run), and `mode`, how a terminal socket may be used.
 */
export const STREAM_URL_CLAIMS = ["run", "mode"] as const;
export type StreamUrlClaim = (typeof STREAM_URL_CLAIMS)[number];
export type StreamUrlClaims = Partial<Record<StreamUrlClaim, string>>;

/** Names one run of a process: its start time and pid, which no later process with the same id shares. */
export function processRunTag(process: { startTime: string; pid?: number | undefined }): string {
  return `${Date.parse(process.startTime).toString(36)}.${(process.pid ?? 0).toString(36)}`;
}

export const streamUrlSchema = lazySchema(() => z.object({
  /** Absolute URL (http/https for an event stream, ws/wss for a WebSocket); opened without Authorization. */
  url: z.string(),
  /** When the URL stops being accepted (ISO 8601). */
  expiresAt: z.string(),
}));
export type StreamUrl = z.output<typeof streamUrlSchema>;

/**
 * What POST /v1/sandboxes/:id/exec takes besides an exec request: with `stream: "url"` the command
 * starts in the background and the answer comes at once, with a signed URL for its event stream.
 */
export const execStreamUrlFieldsSchema = lazySchema(() => z.strictObject({
  stream: z.literal("url").optional().describe('"url": start the command and answer at once with a signed URL of its event stream'),
  ttlSeconds: streamUrlTtlSchema.optional(),
}));

/** The answer of POST /exec with `stream: "url"`: the exec's ids and a signed URL of GET /exec/:processId/stream. */
export const execStreamUrlSchema = lazySchema(() => streamUrlSchema.extend({
  processId: z.string(),
  pid: z.number().int().optional(),
}));
export type ExecStreamUrl = z.output<typeof execStreamUrlSchema>;
