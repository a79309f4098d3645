/**
 * Where a resumed stream (an exec's events, a process's log) picks up, the same on every side:
 *
 * - `since`: an event id (`seq`). Only events after it are sent. `Last-Event-ID` (what EventSource
 *   sends by itself) says the same and wins over `?since=`.
 * - `stdoutOffset` / `stderrOffset`: byte offsets per stream. Output before them is left out, and an
 *   output event that straddles one is sent from that byte on, with its own id and its `offset`
 *   moved. A reader whose connection broke in the middle of an event resumes with the bytes it got
 *   of it; a reader in another process attaches with just the offsets it has.
 *
 * When output the reader asked for is no longer retained, a `truncated` event says how much of each
 * stream is missing before the stream goes on.
 */
import * as z from "zod";
import { outputByteLength } from "./partial-event.ts";
import { generationSchema, type OutputStream } from "./process.ts";
import { lazySchema } from "./lazy-schema.ts";

export interface ResumePoint {
  since?: number;
  stdoutOffset?: number;
  stderrOffset?: number;
}

const MAX_DIGITS = 15;
const wholeNumber = (what: string) =>
  z
    .string()
    .regex(new RegExp(`^\\d{1,${MAX_DIGITS}}$`), `${what} is a whole number`)
    .transform(Number);

/** The resume point as query parameters (strings), read into numbers. */
export const resumeQuerySchema = lazySchema(() => z.object({
  since: wholeNumber("since").optional().describe("Resume after this event id (a Last-Event-ID header wins)"),
  stdoutOffset: wholeNumber("stdoutOffset").optional().describe("Leave out stdout before this byte offset"),
  stderrOffset: wholeNumber("stderrOffset").optional().describe("Leave out stderr before this byte offset"),
}));

const position = lazySchema(() => z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER));

/** The resume point as numbers (what an RPC caller passes). */
export const resumePointSchema = lazySchema(() => z.object({
  since: position.optional(),
  stdoutOffset: position.optional(),
  stderrOffset: position.optional(),
}));

/** A Last-Event-ID header's value (blank counts as absent). */
export const lastEventIdSchema = lazySchema(() => z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .pipe(wholeNumber("Last-Event-ID").optional()));

/** The resume point of a request: its query, with the Last-Event-ID header (when given) as `since`. */
export function resumePointOf(lastEventId: number | undefined, query: z.output<typeof resumeQuerySchema>): ResumePoint {
  const since = lastEventId ?? query.since;
  const point: ResumePoint = {};
  if (since !== undefined) point.since = since;
  if (query.stdoutOffset !== undefined) point.stdoutOffset = query.stdoutOffset;
  if (query.stderrOffset !== undefined) point.stderrOffset = query.stderrOffset;
  return point;
}

/** The query parameters of a resume point (without `?`); empty when it has none. */
export function resumeQueryParams(point: ResumePoint): Record<string, string> {
  const params: Record<string, string> = {};
  for (const name of ["since", "stdoutOffset", "stderrOffset"] as const) {
    const value = point[name];
    if (value !== undefined) params[name] = String(value);
  }
  return params;
}

/** What a reader needs of a stream event to know where it stands after it. */
export interface CursorEvent {
  type: string;
  seq?: number | undefined;
  offset?: number;
  data?: string;
  encoding?: string | undefined;
  bytes?: number | undefined;
  stdoutDropped?: number;
  stderrDropped?: number;
}

/** A stream's position: the last output event's offset, plus its length once anyone asks. */
interface StreamMark {
  offset: number;
  last: { data: string; encoding?: string | undefined; bytes?: number | undefined } | undefined;
}

/**
 * The reader's side of a resume point: the last whole event's id, and each stream's byte position
 * after the output that came (whole events and parts of cut ones) or was reported dropped. A
 * position is unknown until the stream's first output event when the reader started in the middle
 * without offsets. Lengths are counted only when a position is asked for, so following a fast
 * stream costs nothing per event.
 */
export class ResumeCursor {
  #since: number | undefined;
  readonly #marks: Record<OutputStream, StreamMark | undefined>;

  /** `start` is where the stream began; without `since` (from the first event) both positions are 0. */
  constructor(start: ResumePoint = {}) {
    this.#since = start.since;
    const fromStart = start.since === undefined || start.since === 0;
    const mark = (offset: number | undefined): StreamMark | undefined =>
      offset !== undefined ? { offset, last: undefined } : fromStart ? { offset: 0, last: undefined } : undefined;
    this.#marks = { stdout: mark(start.stdoutOffset), stderr: mark(start.stderrOffset) };
  }

  /** The id of the last whole event. */
  get since(): number | undefined {
    return this.#since;
  }

  /** A stream's byte position (undefined while unknown). */
  position(stream: OutputStream): number | undefined {
    const mark = this.#marks[stream];
    if (mark?.last) {
      mark.offset += outputByteLength(mark.last);
      mark.last = undefined;
    }
    return mark?.offset;
  }

  /** Where to resume: after the last whole event, from the known positions. */
  get point(): ResumePoint {
    const point: ResumePoint = {};
    if (this.#since !== undefined) point.since = this.#since;
    const stdout = this.position("stdout");
    const stderr = this.position("stderr");
    if (stdout !== undefined) point.stdoutOffset = stdout;
    if (stderr !== undefined) point.stderrOffset = stderr;
    return point;
  }

  /** An event arrived whole. */
  passed(event: CursorEvent): void {
    if (event.seq !== undefined) this.#since = event.seq;
    if ((event.type === "stdout" || event.type === "stderr") && event.offset !== undefined && event.data !== undefined) {
      this.#marks[event.type] = { offset: event.offset, last: event as CursorEvent & { data: string } };
    } else if (event.type === "truncated") {
      this.#skip("stdout", event.stdoutDropped ?? 0);
      this.#skip("stderr", event.stderrDropped ?? 0);
    }
  }

  /** Part of an output event arrived (its id stays unpassed: the rest comes again under it). */
  passedPart(event: CursorEvent & { type: OutputStream; offset: number; data: string }): void {
    this.#marks[event.type] = { offset: event.offset, last: event };
  }

  #skip(stream: OutputStream, bytes: number): void {
    const position = this.position(stream);
    if (position !== undefined) this.#marks[stream] = { offset: position + bytes, last: undefined };
  }
}

/** Where a resumed stream (a process log, an exec, a code run) starts, and the handle's container generation. */
export const streamQuerySchema = lazySchema(() => resumeQuerySchema.extend({ generation: generationSchema.optional() }));
