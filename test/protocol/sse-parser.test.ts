/** The protocol's SSE reading (what clients use): however the bytes are cut, the same messages. */
import { describe, expect, it } from "vitest";
import { readSseStream, SseParser, type SseMessage } from "../../protocol/sse.ts";
import { Utf8ChunkDecoder } from "../../protocol/utf8.ts";

/** Cuts `bytes` at random places (inside characters and line ends too). */
function randomCuts(bytes: Uint8Array, maxPiece: number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(Math.random() * maxPiece);
    pieces.push(bytes.slice(at, at + size));
    at += size;
  }
  return pieces;
}

function streamOf(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({ pull: (controller) => (i < pieces.length ? controller.enqueue(pieces[i++]!) : controller.close()) });
}

async function readAll(pieces: Uint8Array[]): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of readSseStream(streamOf(pieces))) messages.push(message);
  return messages;
}

describe("Utf8ChunkDecoder", () => {
  it("gives the text a streaming TextDecoder gives, invalid bytes included", () => {
    const alphabet = [0x41, 0x0a, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0x80, 0xed, 0xa0];
    for (let round = 0; round < 2000; round++) {
      const bytes = Uint8Array.from({ length: Math.floor(Math.random() * 40) }, () => alphabet[Math.floor(Math.random() * alphabet.length)]!);
      const streaming = new TextDecoder();
      const chunked = new Utf8ChunkDecoder();
      let expected = "";
      let actual = "";
      for (const piece of randomCuts(bytes, 5)) {
        expected += streaming.decode(piece, { stream: true });
        actual += chunked.decode(piece);
      }
      expected += streaming.decode();
      actual += chunked.end();
      expect(actual).toBe(expected);
    }
  });
});

describe("readSseStream", () => {
  const text =
    ": comment\r\n" +
    "id: 1\nevent: stdout\ndata: {\"data\":\"héllo 😀\"}\n\n" +
    "id: 2\r\nevent: stderr\r\ndata: line one\r\ndata: line two\r\n\r\n" +
    "event: x\rdata:no space\r\r" +
    "data: " + "long ".repeat(20_000) + "€\n\n" +
    "id: 3\ndata\n\n" +
    "data: cut off at the end";
  const bytes = new TextEncoder().encode(text);
  const whole = new SseParser().push(text);

  it("parses line ends, comments, multi-line data and ids", () => {
    expect(whole.map((m) => [m.id, m.event, m.data.slice(0, 20)])).toEqual([
      ["1", "stdout", '{"data":"héllo 😀"}'],
      ["2", "stderr", "line one\nline two"],
      [undefined, "x", "no space"],
      [undefined, "message", "long long long long "],
      ["3", "message", ""],
    ]);
    expect(whole[3]!.data.endsWith("long €")).toBe(true);
  });

  it("yields the same messages however the bytes are cut", async () => {
    for (const maxPiece of [1, 3, 7, 64, 5000, 70_000]) {
      for (let round = 0; round < (maxPiece < 10 ? 3 : 20); round++) {
        expect(await readAll(randomCuts(bytes, maxPiece))).toEqual(whole);
      }
    }
  });

  it("keeps a lone CR at the end of a push as a line end once more text comes", () => {
    const parser = new SseParser();
    expect(parser.push("data: a\r")).toEqual([]);
    expect(parser.push("\rdata: b")).toEqual([{ id: undefined, event: "message", data: "a" }]);
    expect(parser.push("\n\n")).toEqual([{ id: undefined, event: "message", data: "b" }]);
  });
});
