/**
 * The egress proxy reads heads and finds where bodies end, and nothing more (runtime/egress/
 * http-head.ts, http-framing.ts): the ground request smuggling stands on. Heads a server could
 * read otherwise are refused; a body's end is found the same however its bytes are split; and a
 * chunked body that lies about its sizes is refused rather than ended early or late.
 */
import { describe, expect, it } from "vitest";
import { BodyScanner, requestFraming, responseFraming, type Framing } from "../../runtime/egress/http-framing.ts";
import { headEnd, MessageError, parseRequestHead, parseResponseHead } from "../../runtime/egress/http-head.ts";

const head = (text: string) => Buffer.from(text, "latin1");
const framingOf = (text: string) => requestFraming(parseRequestHead(head(text)));

/** How `bytes` is cut when fed in pieces of `size`: body bytes used, content counted, done. */
function scan(framing: Framing, bytes: Buffer, size: number): { used: number; content: number; done: boolean } {
  const scanner = new BodyScanner(framing, 400);
  let used = 0;
  for (let at = 0; at < bytes.length && !scanner.done; at += size) {
    const piece = bytes.subarray(at, Math.min(at + size, bytes.length));
    const took = scanner.take(piece);
    used += took;
    if (took < piece.length) break;
  }
  return { used, content: scanner.content, done: scanner.done };
}

function refusal(run: () => unknown): { status: number; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(MessageError);
    return { status: (error as MessageError).status, message: (error as MessageError).message };
  }
  throw new Error("not refused");
}

describe("request heads", () => {
  it("are read with their fields as sent", () => {
    const parsed = parseRequestHead(head("POST /a?b=1 HTTP/1.1\r\nHost: api.test\r\nX-Two:  spaced \t\r\n\r\n"));
    expect(parsed).toEqual({ method: "POST", target: "/a?b=1", version: "HTTP/1.1", fields: [["Host", "api.test"], ["X-Two", "spaced"]] });
  });

  it("end at the first empty line, and never at a bare LF", () => {
    const bytes = head("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /next HTTP/1.1\r\n");
    expect(headEnd(bytes, 0, 400)).toBe(27);
    expect(headEnd(head("GET / HTTP/1.1\r\nHost: a\r\n"), 0, 400)).toBe(-1);
    expect(refusal(() => headEnd(head("GET / HTTP/1.1\nHost: a\n\n"), 0, 400)).status).toBe(400);
  });

  it("refuse what a server could read otherwise", () => {
    const cases = [
      "GET / HTTP/1.1\r\nHost : api.test\r\n\r\n", // a space before the colon
      "GET / HTTP/1.1\r\nHost: api.test\r\nX: a\r\n b\r\n\r\n", // a folded line
      "GET / HTTP/1.1\r\nHost: api.test\rX: b\r\n\r\n", // a bare CR
      "GET / HTTP/1.1\r\nHost: api\x00.test\r\n\r\n", // a control character
      "GET  / HTTP/1.1\r\nHost: api.test\r\n\r\n", // two spaces
      "GET / HTTP/1.1 \r\nHost: api.test\r\n\r\n",
    ];
    for (const text of cases) expect(refusal(() => parseRequestHead(head(text))).status, text).toBe(400);
    expect(refusal(() => parseRequestHead(head("GET / HTTP/2.0\r\nHost: a\r\n\r\n"))).status).toBe(505);
  });
});

describe("request framing", () => {
  it("is a length, chunked, or no body", () => {
    expect(framingOf("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n")).toEqual({ kind: "length", length: 12 });
    expect(framingOf("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n")).toEqual({ kind: "chunked" });
    expect(framingOf("GET / HTTP/1.1\r\n\r\n")).toEqual({ kind: "none" });
    expect(framingOf("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")).toEqual({ kind: "none" });
  });

  it("refuses every framing two parsers could read two ways", () => {
    const cases: [string, number][] = [
      ["Content-Length: 4\r\nTransfer-Encoding: chunked", 400],
      ["Transfer-Encoding: chunked\r\nContent-Length: 4", 400],
      ["Content-Length: 4\r\nContent-Length: 5", 400],
      ["Content-Length: 4\r\nContent-Length: 4", 400],
      ["Content-Length: 4, 4", 400],
      ["Content-Length: +4", 400],
      ["Content-Length: 0x4", 400],
      ["Transfer-Encoding: xchunked", 501],
      ["Transfer-Encoding: chunked, identity", 501],
      ["Transfer-Encoding: gzip, chunked", 501],
      ["Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", 501],
      ["Transfer-Encoding: ", 501],
    ];
    for (const [fields, status] of cases) expect(refusal(() => framingOf(`POST / HTTP/1.1\r\n${fields}\r\n\r\n`)).status, fields).toBe(status);
    expect(refusal(() => framingOf("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n")).status).toBe(400);
  });
});

describe("answer framing", () => {
  const answer = (text: string, method = "GET") => responseFraming(parseResponseHead(head(text)), method);

  it("follows the method and the status before the fields", () => {
    expect(answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", "HEAD")).toEqual({ kind: "none" });
    expect(answer("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n")).toEqual({ kind: "none" });
    expect(answer("HTTP/1.1 204 No Content\r\n\r\n")).toEqual({ kind: "none" });
    expect(answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")).toEqual({ kind: "length", length: 10 });
    expect(answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")).toEqual({ kind: "chunked" });
    expect(answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n")).toEqual({ kind: "close" });
    expect(answer("HTTP/1.0 200 OK\r\n\r\n")).toEqual({ kind: "close" });
  });

  it("refuses an answer framed two ways", () => {
    expect(refusal(() => answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n")).status).toBe(502);
    expect(refusal(() => answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n")).status).toBe(502);
    expect(refusal(() => parseResponseHead(head("HTTP/1.1 2000 OK\r\n\r\n"))).status).toBe(502);
  });
});

describe("a body's end", () => {
  const chunked = head("5;name=value\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nTrailer-Field: x\r\n\r\n");
  const after = head("GET /next HTTP/1.1\r\nHost: denied.test\r\n\r\n");

  it("is found the same however the bytes are split, and what follows is left alone", () => {
    for (const size of [1, 2, 3, 7, 64, 4096]) {
      expect(scan({ kind: "chunked" }, Buffer.concat([chunked, after]), size), `pieces of ${size}`).toEqual({ used: chunked.length, content: 31, done: true });
      expect(scan({ kind: "length", length: 10 }, Buffer.concat([head("0123456789"), after]), size)).toEqual({ used: 10, content: 10, done: true });
    }
  });

  it("counts a connection-delimited body to its last byte, and never calls it done", () => {
    expect(scan({ kind: "close" }, Buffer.concat([chunked, after]), 5)).toEqual({ used: chunked.length + after.length, content: chunked.length + after.length, done: false });
  });

  it("refuses a chunked body that lies about its sizes", () => {
    const cases = [
      "3\r\nabcGET /smuggled HTTP/1.1\r\n", // data longer than its size
      "5 5\r\nhello\r\n0\r\n\r\n", // a size that is two numbers
      "-5\r\nhello\r\n0\r\n\r\n",
      "0x5\r\nhello\r\n0\r\n\r\n",
      "\r\nhello\r\n0\r\n\r\n", // no size
      "5\nhello\r\n0\r\n\r\n", // a bare LF
      "5\r\nhello\n0\r\n\r\n",
      "fffffffffffffff\r\n", // beyond an exact number
      "0\r\nTrailer\nX: y\r\n\r\n",
    ];
    for (const text of cases) {
      for (const size of [1, 4096]) expect(refusal(() => scan({ kind: "chunked" }, head(text), size)).message, `${JSON.stringify(text)} in pieces of ${size}`).toMatch(/^malformed chunked body/);
    }
  });
});
