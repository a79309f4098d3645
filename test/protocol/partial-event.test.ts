/**
 * Output events cut anywhere: what the parser makes of the part that came (always a prefix of the
 * chunk's bytes, whole characters only), and the reader's cursor that says where to resume.
 */
import { describe, expect, it } from "vitest";
import { resolveLimits } from "../../container/config.ts";
import { ManagedProcess } from "../../container/engine/managed-process.ts";
import { startSpec } from "../../container/engine/options.ts";
import { logFramer } from "../../container/http/streams/sse-frames.ts";
import { partialOutputEvent } from "../../protocol/partial-event.ts";
import { ResumeCursor } from "../../protocol/resume.ts";
import { SseParser } from "../../protocol/sse.ts";
import { Utf8ChunkDecoder } from "../../protocol/utf8.ts";

const limits = resolveLimits();

/** The SSE frame the server writes for one output chunk. */
function frameOf(data: Buffer, encoding: "utf8" | "base64"): Buffer {
  const record = new ManagedProcess("p", startSpec({ command: "x", encoding }, limits), limits, "test/1");
  record.log.appendOutput("stdout", Buffer.from("before"));
  const entry = record.log.appendOutput("stdout", data);
  const frame = logFramer(record)(entry);
  const bytes = Buffer.alloc(frame.byteLength);
  frame.writeTo(bytes, 0);
  return bytes;
}

/** What a reader makes of the first `length` bytes of `frame`. */
function partOf(frame: Buffer, length: number) {
  const parser = new SseParser();
  const decoder = new Utf8ChunkDecoder();
  expect(parser.push(decoder.decode(frame.subarray(0, length)))).toEqual([]);
  const message = parser.partial();
  return message ? partialOutputEvent(message.data) : undefined;
}

describe("partial output events", () => {
  const chunk = Buffer.from('plain "quoted" \\ back\ttab\u0001ctl é€😀 end\n'.repeat(3));

  it("gives, wherever a utf8 frame is cut, a prefix of the chunk's bytes in whole characters", () => {
    const frame = frameOf(chunk, "utf8");
    let seen = 0;
    for (let length = 0; length < frame.length - 3; length++) {
      const part = partOf(frame, length);
      if (!part) continue;
      seen++;
      expect(part).toMatchObject({ type: "stdout", offset: 6, seq: 2, processId: "p" });
      expect(chunk.subarray(0, part.byteLength).toString("utf8")).toBe(part.data);
    }
    expect(seen).toBeGreaterThan(chunk.length);
    // Just before the closing brace: all of it.
    expect(partOf(frame, frame.length - 3)!.data).toBe(chunk.toString("utf8"));
  });

  it("gives whole groups of four of a base64 frame", () => {
    const bytes = Buffer.from(Array.from({ length: 100 }, (_, i) => (i * 37) & 0xff));
    const frame = frameOf(bytes, "base64");
    for (let length = 0; length < frame.length - 3; length++) {
      const part = partOf(frame, length);
      if (!part) continue;
      expect(part.encoding).toBe("base64");
      expect(part.data.length % 4).toBe(0);
      expect(Buffer.from(part.data, "base64")).toEqual(bytes.subarray(0, part.byteLength));
    }
  });

  it("is not used for a chunk whose text is not its bytes (invalid UTF-8)", () => {
    const frame = frameOf(Buffer.from([0x61, 0xff, 0x62, 0x63]), "utf8");
    expect(partOf(frame, frame.length - 4)).toBeUndefined();
  });

  it("is nothing for frames that are not output", () => {
    expect(partialOutputEvent('{"type":"status","status":"running","data":"x')).toBeUndefined();
    expect(partialOutputEvent('{"type":"stdout","timestamp":"t"')).toBeUndefined();
  });
});

describe("ResumeCursor", () => {
  it("follows whole events, parts of events and truncation notices", () => {
    const cursor = new ResumeCursor();
    expect(cursor.point).toEqual({ stdoutOffset: 0, stderrOffset: 0 });
    cursor.passed({ type: "start", seq: 1 });
    cursor.passed({ type: "stdout", seq: 2, offset: 0, data: "héllo" });
    cursor.passed({ type: "stderr", seq: 3, offset: 0, data: "AAEC", encoding: "base64" });
    expect(cursor.point).toEqual({ since: 3, stdoutOffset: 6, stderrOffset: 3 });
    cursor.passedPart({ type: "stdout", seq: 4, offset: 6, data: "wor" });
    expect(cursor.point).toEqual({ since: 3, stdoutOffset: 9, stderrOffset: 3 });
    cursor.passed({ type: "stdout", seq: 4, offset: 9, data: "ld", bytes: 5 });
    cursor.passed({ type: "truncated", seq: 10, stdoutDropped: 100, stderrDropped: 7 });
    expect(cursor.point).toEqual({ since: 10, stdoutOffset: 114, stderrOffset: 10 });
  });

  it("does not know a stream's position after starting from an id alone, until that stream's output comes", () => {
    const cursor = new ResumeCursor({ since: 7 });
    expect(cursor.point).toEqual({ since: 7 });
    cursor.passed({ type: "stderr", seq: 8, offset: 40, data: "x" });
    expect(cursor.point).toEqual({ since: 8, stderrOffset: 41 });
  });
});
