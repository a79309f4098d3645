/**
 * The output coalescer between a process's pipes and its log: small writes merge into large chunks
 * (streaming is CPU-bound, so fewer events is faster), yet a chunk never exceeds its size, never cuts a
 * UTF-8 character, keeps stdout/stderr in the order written and flushes by itself, so a progress bar
 * without a newline still arrives.
 */
import { describe, expect, it } from "vitest";
import { OutputCoalescer } from "../../container/engine/coalescer.ts";
import { completeUtf8Length, truncateUtf8 } from "../../container/engine/utf8.ts";

type Chunk = [string, Buffer];

function collect(maxBytes: number, holdUtf8 = true) {
  const chunks: Chunk[] = [];
  const coalescer = new OutputCoalescer((stream, data) => chunks.push([stream, Buffer.from(data)]), {
    maxBytes,
    maxDelayMs: 1000,
    holdUtf8,
  });
  return { chunks, coalescer };
}

describe("UTF-8 boundaries", () => {
  it("finds the end of the last complete character", () => {
    const emoji = Buffer.from("😀"); // 4 bytes
    for (let cut = 0; cut < 4; cut++) {
      const bytes = Buffer.concat([Buffer.from("ab"), emoji.subarray(0, cut)]);
      expect(completeUtf8Length(bytes)).toBe(2);
    }
    expect(completeUtf8Length(Buffer.from("ab😀"))).toBe(6);
    expect(completeUtf8Length(Buffer.from([0x80, 0x80, 0x80, 0x80]))).toBe(4); // invalid: never held
    expect(completeUtf8Length(Buffer.alloc(0))).toBe(0);
  });

  it("truncates at a character boundary", () => {
    expect(truncateUtf8(Buffer.from("a€b"), 2).toString()).toBe("a");
    expect(truncateUtf8(Buffer.from("a€b"), 4).toString()).toBe("a€");
  });
});

describe("OutputCoalescer", () => {
  it("merges small writes and flushes on demand", () => {
    const { chunks, coalescer } = collect(1024);
    coalescer.write("stdout", Buffer.from("a"));
    coalescer.write("stdout", Buffer.from("b"));
    expect(chunks).toEqual([]);
    coalescer.flush();
    expect(chunks.map(([s, d]) => [s, d.toString()])).toEqual([["stdout", "ab"]]);
  });

  it("emits chunks of at most maxBytes", () => {
    const { chunks, coalescer } = collect(10, false);
    coalescer.write("stdout", Buffer.alloc(35, 0x61));
    coalescer.end();
    expect(chunks.map(([, d]) => d.length)).toEqual([10, 10, 10, 5]);
  });

  it("never cuts a character at the size limit", () => {
    const { chunks, coalescer } = collect(8);
    coalescer.write("stdout", Buffer.from("abcdef😀gh")); // the emoji straddles byte 8
    coalescer.end();
    expect(chunks.map(([, d]) => d.toString())).toEqual(["abcdef", "😀gh"]);
  });

  it("holds a split character until its last byte arrives", () => {
    const { chunks, coalescer } = collect(1024);
    const euro = Buffer.from("€");
    coalescer.write("stdout", Buffer.concat([Buffer.from("x"), euro.subarray(0, 1)]));
    coalescer.flush();
    coalescer.write("stdout", euro.subarray(1));
    coalescer.flush();
    expect(chunks.map(([, d]) => d.toString())).toEqual(["x", "€"]);
  });

  it("keeps arrival order across streams", () => {
    const { chunks, coalescer } = collect(1024);
    coalescer.write("stdout", Buffer.from("1"));
    coalescer.write("stderr", Buffer.from("2"));
    coalescer.write("stdout", Buffer.from("3"));
    coalescer.end();
    expect(chunks.map(([s, d]) => `${s}:${d}`)).toEqual(["stdout:1", "stderr:2", "stdout:3"]);
  });

  it("emits an unfinished character at the end rather than losing it", () => {
    const { chunks, coalescer } = collect(1024);
    coalescer.write("stderr", Buffer.from([0x61, 0xf0, 0x9f]));
    coalescer.end();
    expect(Buffer.concat(chunks.map(([, d]) => d))).toEqual(Buffer.from([0x61, 0xf0, 0x9f]));
  });

  it("flushes by itself after the delay", async () => {
    const chunks: string[] = [];
    const coalescer = new OutputCoalescer((_, data) => chunks.push(data.toString()), { maxBytes: 1024, maxDelayMs: 5, holdUtf8: true });
    coalescer.write("stdout", Buffer.from("tick"));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(chunks).toEqual(["tick"]);
  });
});
