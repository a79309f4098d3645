/**
 * The SSE frames the server builds from raw bytes (never re-encoding each chunk): the JSON text of
 * UTF-8 output must equal JSON.stringify of the decoded text, invalid UTF-8 says its byte count, every
 * field comes before `data` (so a cut frame stays usable), and parsed frames equal the event objects.
 */
import { describe, expect, it } from "vitest";
import { toExecEvent, toLogEvent } from "../../container/engine/events.ts";
import { ManagedProcess } from "../../container/engine/managed-process.ts";
import { resolveLimits } from "../../container/config.ts";
import { execSpec, startSpec } from "../../container/engine/options.ts";
import { jsonStringOfUtf8 } from "../../container/http/streams/json-text.ts";
import { execFramer, logFramer, type Frame } from "../../container/http/streams/sse-frames.ts";
import { SseParser } from "../../protocol/sse.ts";

const limits = resolveLimits();
/** The literal written at an odd offset of a buffer with room to spare, as text (checks the length it claims). */
function quote(bytes: Buffer): string {
  const literal = jsonStringOfUtf8(bytes);
  const target = Buffer.alloc(literal.byteLength + 8, 0x7e);
  const end = literal.writeTo(target, 3);
  expect(end).toBe(3 + literal.byteLength);
  expect(target.subarray(0, 3).toString() + target.subarray(end).toString()).toBe("~".repeat(8));
  return target.subarray(3, end).toString("utf8");
}

function randomBytes(length: number, alphabet: number[]): Buffer {
  const bytes = Buffer.alloc(length + 3).subarray(Math.floor(Math.random() * 3)); // vary alignment
  for (let i = 0; i < length; i++) {
    bytes[i] = Math.random() < 0.7 ? 0x20 + Math.floor(Math.random() * 0x5f) : alphabet[Math.floor(Math.random() * alphabet.length)]!;
  }
  return bytes.subarray(0, length);
}

describe("jsonStringOfUtf8", () => {
  const tricky = [0x22, 0x5c, 0x0a, 0x0d, 0x09, 0x1b, 0x00, 0x01, 0x1f, 0x7f, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0xc3];
  it("always equals JSON.stringify of the decoded text", () => {
    for (let round = 0; round < 20_000; round++) {
      const bytes = randomBytes(Math.floor(Math.random() * 100), tricky);
      expect(quote(bytes)).toBe(JSON.stringify(bytes.toString("utf8")));
    }
  });

  it("covers the fast paths on long chunks", () => {
    const cases = [
      "a".repeat(70_000),
      ("x".repeat(1023) + "\n").repeat(64),
      'say "hi" \\ there\n'.repeat(500) + "z".repeat(60_000),
      "ab😀\n".repeat(9000),
      "\x1b[31mred\x1b[0m\n".repeat(4000),
      "a\x01b\n".repeat(10_000),
      "\b\f\x00\x1f".repeat(5000),
      "a".repeat(5000) + "\x02" + "b".repeat(5000) + "\\\"",
    ];
    for (const text of cases) expect(quote(Buffer.from(text))).toBe(JSON.stringify(text));
    const invalid = Buffer.concat([Buffer.from("ok"), Buffer.from([0xff, 0xfe]), Buffer.alloc(100, 0x61)]);
    expect(quote(invalid)).toBe(JSON.stringify(invalid.toString("utf8")));
  });
});

describe("SSE frames", () => {
  function parseFrames(frames: Frame[]) {
    const bytes = Buffer.alloc(frames.reduce((n, frame) => n + frame.byteLength, 0));
    let at = 0;
    for (const frame of frames) at = frame.writeTo(bytes, at);
    expect(at).toBe(bytes.length);
    const messages = new SseParser().push(bytes.toString("utf8"));
    return messages.map((message) => ({ id: message.id, event: message.event, raw: message.data, data: JSON.parse(message.data) }));
  }

  it("says how many bytes a chunk had when its text cannot (invalid UTF-8), and puts every field before data", () => {
    const record = new ManagedProcess("proc-3", startSpec({ command: "x" }, limits), limits, "test/3");
    record.log.appendOutput("stdout", Buffer.from("fine"));
    record.log.appendOutput("stdout", Buffer.from([0x61, 0xff, 0xfe, 0x62]));
    const [fine, broken] = parseFrames(record.log.read(0, Infinity).entries.map(logFramer(record)));
    expect(fine!.raw).toMatch(/"offset":0,"data":"fine"}$/);
    expect(broken!.data).toMatchObject({ offset: 4, bytes: 4, data: "a\ufffd\ufffdb" });
    expect(broken!.raw).toMatch(/"offset":4,"bytes":4,"data":/);
  });

  for (const encoding of ["utf8", "base64"] as const) {
    it(`frame output exactly as the event objects, ${encoding}`, () => {
      const log = new ManagedProcess("proc-1", startSpec({ command: "x", encoding }, limits), limits, "test/1");
      const exec = new ManagedProcess("proc-2", execSpec({ command: "x", encoding }, limits, "stream"), limits, "test/2");
      for (const record of [log, exec]) {
        record.log.appendStatus({ status: "running", pid: 42 });
        record.log.appendOutput("stdout", Buffer.from('line "one"\n\ttwo\\ 😀'));
        record.log.appendOutput("stderr", Buffer.from("x".repeat(20_000) + "\n"));
        record.log.appendOutput("stdout", Buffer.from([0x6f, 0x6b, 0xff, 0x0a])); // not UTF-8
      }
      for (const [record, framer, toEvent] of [
        [log, logFramer(log), toLogEvent],
        [exec, execFramer(exec), toExecEvent],
      ] as const) {
        const items = record.log.read(0, Infinity).entries;
        const frames = items.map(framer);
        const parsed = parseFrames(frames);
        expect(parsed).toHaveLength(items.length);
        parsed.forEach((message, i) => {
          const event = (toEvent as (item: unknown, record: ManagedProcess) => { type: string; seq?: number })(items[i], record);
          // The same JSON, key for key in the same order (output fields come before `data`).
          expect(message.raw).toBe(JSON.stringify(event));
          expect(message.event).toBe(event.type);
          expect(message.id).toBe(String(event.seq));
        });
      }
    });
  }
});
