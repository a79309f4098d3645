/**
 * Process tails: each background process's record with the last events of its log, which the
 * Durable Object keeps beyond the container (src/sandbox/process-ledger.ts). Apart from process.ts
 * because it is made of log events (events.ts), which are made of process records.
 */
import * as z from "zod";
import type { SuccessEnvelope } from "./envelope.ts";
import type { LogEvent } from "./events.ts";
import type { ProcessInfo } from "./process.ts";
import { lazySchema } from "./lazy-schema.ts";

/** Output bytes per process a tail may ask for: what the Durable Object keeps of a log fits well under it. */
export const MAX_TAIL_BYTES = 1024 * 1024;

export const processTailsQuerySchema = lazySchema(() => z.object({
  bytes: z.coerce.number().int().positive().max(MAX_TAIL_BYTES),
}));

/**
 * `GET /api/process/tails`: each background process's record and the last events of its log —
 * output events whose data adds up to at most `bytes` (older ones left out), and every status
 * event — with their own seq and offsets, so readers resume with the cursors they have.
 */
export interface ProcessTail {
  process: ProcessInfo;
  events: LogEvent[];
}
export type ProcessTailsResponse = SuccessEnvelope & { processes: ProcessTail[] };
