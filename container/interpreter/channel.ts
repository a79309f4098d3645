/**
 * The framed protocol between the server and a driver (drivers/), over the interpreter's fd 3.
 * A frame is a 5-byte header — the payload's length (big-endian u32) and its kind — then the
 * payload: raw stdout or stderr bytes of the cell (driver → server only), or one JSON message.
 *
 * Server → driver: `run` {id, code, env?} (env: variables for that cell only), `interrupt` {id}.
 * Driver → server: `ready` {language, version, pid, cwd?}, then per cell `result` {id, result},
 * `error` {id, error}, and `done` {id} after everything else of the cell.
 */
import * as z from "zod";
import { raisedErrorSchema, resultSchema, type Result } from "../../protocol/code.ts";
import { checkedChart } from "./driver-chart.ts";
import { lazySchema } from "../../protocol/lazy-schema.ts";

export const FRAME_KIND = { stdout: 1, stderr: 2, message: 3 } as const;
const HEADER_BYTES = 5;
/** A frame larger than this is a broken channel (whatever the cell wrote into fd 3), not a result. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

const cellId = lazySchema(() => z.string().nullable());

export const driverMessageSchema = lazySchema(() => z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), language: z.string(), version: z.string(), pid: z.number().optional(), cwd: z.string().optional() }),
  // The chart is checked on its own (driver-chart.ts): a chart that does not fit is replaced, not fatal.
  z.object({ type: z.literal("result"), id: cellId, result: resultSchema.extend({ chart: z.unknown().optional() }) }),
  z.object({ type: z.literal("error"), id: cellId, error: raisedErrorSchema }),
  z.object({ type: z.literal("done"), id: cellId }),
]));
type SentMessage = z.infer<typeof driverMessageSchema>;
export type DriverMessage = Exclude<SentMessage, { type: "result" }> | { type: "result"; id: string | null; result: Result };

export type ServerMessage = { type: "run"; id: string; code: string; env?: Record<string, string> } | { type: "interrupt"; id: string };

export function encodeMessage(message: ServerMessage): Buffer {
  const payload = Buffer.from(JSON.stringify(message), "utf8");
  const frame = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame[4] = FRAME_KIND.message;
  payload.copy(frame, HEADER_BYTES);
  return frame;
}

export type Frame = { kind: "stdout" | "stderr"; data: Buffer } | { kind: "message"; message: DriverMessage };

/** Turns the bytes of fd 3, as they come, into frames; throws on anything that is not a frame. */
export class FrameDecoder {
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  push(chunk: Buffer): Frame[] {
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    const frames: Frame[] = [];
    while (this.#pendingBytes >= HEADER_BYTES) {
      const head = this.#peek(HEADER_BYTES);
      const length = head.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) throw new Error(`frame of ${length} bytes is over the limit`);
      if (this.#pendingBytes < HEADER_BYTES + length) break;
      const kind = head[4];
      this.#take(HEADER_BYTES);
      frames.push(decodeFrame(kind, this.#take(length)));
    }
    return frames;
  }

  /** The first `size` bytes, without consuming them. */
  #peek(size: number): Buffer {
    const first = this.#pending[0]!;
    if (first.length >= size) return first;
    this.#pending = [Buffer.concat(this.#pending, this.#pendingBytes)];
    return this.#pending[0]!;
  }

  #take(size: number): Buffer {
    const first = this.#peek(size);
    const taken = first.subarray(0, size);
    if (first.length === size) this.#pending.shift();
    else this.#pending[0] = first.subarray(size);
    this.#pendingBytes -= size;
    return taken;
  }
}

function decodeFrame(kind: number | undefined, payload: Buffer): Frame {
  if (kind === FRAME_KIND.stdout) return { kind: "stdout", data: payload };
  if (kind === FRAME_KIND.stderr) return { kind: "stderr", data: payload };
  if (kind !== FRAME_KIND.message) throw new Error(`unknown frame kind ${kind}`);
  const parsed = driverMessageSchema.safeParse(JSON.parse(payload.toString("utf8")));
  if (!parsed.success) throw new Error(`malformed driver message: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const message = parsed.data;
  if (message.type !== "result") return { kind: "message", message };
  const { chart, ...formats } = message.result;
  const result: Result = chart === undefined ? formats : { ...formats, chart: checkedChart(chart) };
  return { kind: "message", message: { ...message, result } };
}
