/**
 * Cutting a large string out of a JSON body (container/http/json-string-field.ts): where it cuts,
 * the rest parses to what the whole body says with "" in the field, and the bytes are the field's
 * text in UTF-8; where it cannot be sure (escapes, control bytes, invalid UTF-8, a non-string last
 * key, a small body), it hands back the whole text.
 */
import { describe, expect, it } from "vitest";
import { cutStringField } from "../../container/http/json-string-field.ts";

const big = "wörld 🌍 ".repeat(4000);

/** Asserts the cut reads as JSON.parse reads the whole body. */
function expectFaithfulCut(body: string): Buffer {
  const cut = cutStringField(Buffer.from(body), "content");
  expect(cut.value).toBeDefined();
  const whole = JSON.parse(body) as Record<string, unknown>;
  const rest = JSON.parse(cut.text) as Record<string, unknown>;
  expect(rest.content).toBe("");
  expect({ ...rest, content: cut.value!.toString("utf8") }).toEqual(whole);
  return cut.value!;
}

function expectWhole(body: string | Buffer): void {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const cut = cutStringField(bytes, "content");
  expect(cut.value).toBeUndefined();
  expect(cut.text).toBe(bytes.toString("utf8"));
}

describe("cutting a string field out of a JSON body", () => {
  it("cuts the value, whatever the order of keys and the whitespace around them", () => {
    expect(expectFaithfulCut(JSON.stringify({ path: "a.txt", content: big })).toString()).toBe(big);
    expectFaithfulCut(JSON.stringify({ content: big, path: "a.txt", createParents: false, mode: 420 }));
    expectFaithfulCut(`{ "path" : "content" ,\n\t"content"\r\n:  "${big}" , "encoding":"utf8" }`);
  });

  it("cuts the last of duplicate keys, the one JSON.parse keeps", () => {
    const value = expectFaithfulCut(`{"content":"first","path":"p","content":"${big}"}`);
    expect(value.toString()).toBe(big);
    expectFaithfulCut(`{"content":"${big}","path":"p","content":"last"}`);
  });

  it("takes a value that only looks like the key, or a key in a value, for what it is", () => {
    expectFaithfulCut(`{"path":"content","encoding":"utf8","content":"${big}"}`);
    expectFaithfulCut(`{"path":"'content':x","content":"${big}"}`);
  });

  it("hands back the whole text where it cannot be sure", () => {
    expectWhole(JSON.stringify({ path: "a", content: `${big}\n` })); // an escape
    expectWhole(JSON.stringify({ path: "a\\b", content: big })); // a backslash anywhere
    expectWhole(`{"path":"a","content":"${big}\u0001"}`); // a raw control byte: JSON.parse refuses it
    expectWhole(Buffer.concat([Buffer.from(`{"path":"a","content":"${big}`), Buffer.from([0xff, 0xfe]), Buffer.from(`"}`)])); // not UTF-8
    expectWhole(`{"content":"${big}","content":42}`); // the last key holds no string
    expectWhole(`{"path":"a","content":"${big}`); // never closed
    expectWhole(JSON.stringify({ path: "a", content: "small" })); // too small to be worth it
    expectWhole(JSON.stringify({ path: "a", data: big }));
  });

  it("leaves malformed bodies malformed", () => {
    const cut = cutStringField(Buffer.from(`["content":"${big}"]`), "content");
    expect(() => JSON.parse(cut.text)).toThrow();
  });
});
