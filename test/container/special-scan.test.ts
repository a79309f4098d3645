/** The two scanners for bytes JSON must escape (WebAssembly SIMD and word-at-a-time) against a plain loop. */
import { describe, expect, it } from "vitest";
import { wordScan } from "../../container/http/streams/json-text.ts";
import { simdScanner } from "../../container/http/streams/simd-scan.ts";

const isSpecial = (byte: number) => byte < 0x20 || byte === 0x22 || byte === 0x5c;
const reference = (bytes: Uint8Array) => [...bytes.keys()].filter((i) => isSpecial(bytes[i]!));
const simd = simdScanner();
const alphabet = [0x0a, 0x22, 0x5c, 0x00, 0x1f, 0x1b, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff];

function randomChunk(length: number, density: number): Uint8Array {
  const offset = Math.floor(Math.random() * 16); // every alignment
  const bytes = new Uint8Array(length + offset).subarray(offset);
  for (let i = 0; i < length; i++) {
    bytes[i] = Math.random() < density ? alphabet[Math.floor(Math.random() * alphabet.length)]! : 0x41 + (i % 26);
  }
  return bytes;
}

describe("special byte scanners", () => {
  it("WebAssembly SIMD is available here (the fast path is what runs)", () => {
    expect(simd).toBeDefined();
  });

  for (const [label, scan] of [["simd", simd!], ["word", wordScan]] as const) {
    it(`${label}: finds exactly the control bytes, quotes and backslashes, in order`, () => {
      for (let round = 0; round < 3000; round++) {
        const bytes = randomChunk(Math.floor(Math.random() * 100), Math.random() * 0.2);
        expect(scan(bytes, Infinity)).toEqual(reference(bytes));
      }
      for (const length of [16, 17, 31, 32, 33, 65_536, 200_000]) {
        const bytes = randomChunk(length, 0.01);
        expect(scan(bytes, Infinity)).toEqual(reference(bytes));
      }
    });

    it(`${label}: gives up past maxHits`, () => {
      const bytes = new Uint8Array(64).fill(0x0a);
      expect(scan(bytes, 10)).toBeUndefined();
      expect(scan(bytes, 64)).toHaveLength(64);
      expect(scan(new Uint8Array(0), 0)).toEqual([]);
    });
  }
});
