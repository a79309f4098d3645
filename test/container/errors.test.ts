/**
 * Bad input at the container server: each kind (malformed or too deep JSON, schema failures, NUL
 * bytes, bad timeouts, signals and resume points, oversized bodies and stdin, too many processes,
 * unknown routes) gets its own code and HTTP status from protocol/errors.ts, and none of it, nor
 * clients that hang up mid-request, brings the server down.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "node:http";
import { connect } from "node:net";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { call, startTestServer, type JsonReply, type TestServer } from "./helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ maxRequestBodyBytes: 64 * 1024, maxStdinBytes: 1024, maxLiveProcesses: 3 });
});
afterAll(() => t.close());

function expectError(reply: JsonReply, code: keyof typeof ERROR_CODES): void {
  expect(reply.status, JSON.stringify(reply.body)).toBe(ERROR_CODES[code]);
  expect(reply.body).toMatchObject({ success: false, code, httpStatus: ERROR_CODES[code] });
  expect(typeof reply.body.message).toBe("string");
  expect(Date.parse(reply.body.timestamp)).not.toBeNaN();
}

const exec = (body: unknown) => call(t.url, "POST", "/api/execute", body);

/** Sends a body in chunks without a content-length, tolerating the server closing early. */
function postChunked(path: string, totalBytes: number): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(t.url + path, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < totalBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

describe("bad input gets its own error code and never crashes the server", () => {
  it("malformed JSON → 400 INVALID_JSON", async () => {
    expectError(await exec("{not json"), "INVALID_JSON");
    expectError(await exec(""), "INVALID_JSON");
    expectError(await call(t.url, "POST", "/api/process/start", "[1,"), "INVALID_JSON");
  });

  it("JSON nested deeper than the limit → 400 INVALID_JSON, refused before it is parsed", async () => {
    const depth = 30_000; // within this server's 64 KiB body limit
    const deep = `{"command":"true","env":${"[".repeat(depth)}${"]".repeat(depth)}}`;
    const reply = await exec(deep);
    expectError(reply, "INVALID_JSON");
    expect(reply.body.message).toContain(`${LIMITS.maxJsonDepth} levels`);
    // Nesting within the limit is parsed as usual (and then judged by the schema).
    const shallow = `{"command":"true","env":${"[".repeat(LIMITS.maxJsonDepth - 1)}${"]".repeat(LIMITS.maxJsonDepth - 1)}}`;
    expectError(await exec(shallow), "INVALID_REQUEST");
    // Brackets inside strings are text, not nesting.
    expect((await exec({ command: `echo '${"[".repeat(1000)}'` })).body.stdout).toBe(`${"[".repeat(1000)}\n`);
  });

  it("schema failures → 400 INVALID_REQUEST with the zod issues", async () => {
    const wrongType = await exec({ command: 5 });
    expectError(wrongType, "INVALID_REQUEST");
    expect(wrongType.body.context.issues[0].path).toBe("command");
    expectError(await exec({}), "INVALID_REQUEST");
    expectError(await exec({ command: "" }), "INVALID_REQUEST");
    expectError(await exec({ command: "true", args: "not-an-array" }), "INVALID_REQUEST");
    expectError(await exec({ command: "true", env: { "A=B": "x" } }), "INVALID_REQUEST");
    expectError(await exec({ command: "true", env: { A: 1 } }), "INVALID_REQUEST");
    expectError(await exec({ command: "true", processId: "has space" }), "INVALID_REQUEST");
    expectError(await exec({ command: "true", encoding: "latin1" }), "INVALID_REQUEST");
    expectError(await call(t.url, "POST", "/api/process/start", { command: "true", options: { logRetentionBytes: -5 } }), "INVALID_REQUEST");
  });

  it("NUL bytes in a command, its args, env values or cwd → 400 INVALID_REQUEST, before anything is spawned", async () => {
    const bodies = [
      { command: "echo a\u0000b" },
      { command: "echo", args: ["a\u0000b"] },
      { command: "env", env: { A: "x\u0000y" } },
      { command: "pwd", cwd: "sub\u0000dir" },
    ];
    for (const body of bodies) {
      const reply = await exec(body);
      expectError(reply, "INVALID_REQUEST");
      expect(reply.body.message).toContain("NUL");
      expectError(await call(t.url, "POST", "/api/process/start", body), "INVALID_REQUEST");
    }
    expectError(await call(t.url, "POST", "/api/session", { env: { A: "x\u0000y" } }), "INVALID_REQUEST");
  });

  it("negative, fractional or absurd timeouts → 400 INVALID_REQUEST", async () => {
    for (const timeout of [-1, 0, 1.5, 1e12, "10"]) {
      expectError(await exec({ command: "true", timeout }), "INVALID_REQUEST");
      expectError(await exec({ command: "true", timeoutMs: timeout }), "INVALID_REQUEST");
    }
  });

  it("unknown routes → 404 NOT_FOUND; wrong methods → 405 with Allow", async () => {
    expectError(await call(t.url, "GET", "/nope"), "NOT_FOUND");
    expectError(await call(t.url, "GET", "/api/process/x/y/z"), "NOT_FOUND");
    const wrong = await call(t.url, "GET", "/api/execute");
    expectError(wrong, "METHOD_NOT_ALLOWED");
    expect(wrong.headers.get("allow")).toBe("POST");
    expectError(await call(t.url, "POST", "/api/process/list"), "METHOD_NOT_ALLOWED");
    expectError(await call(t.url, "GET", "/api/process/kill-all"), "METHOD_NOT_ALLOWED");
  });

  it("a body over the limit → 413 PAYLOAD_TOO_LARGE, declared or streamed", async () => {
    const declared = await exec({ command: "true", stdin: "x".repeat(70 * 1024) });
    expectError(declared, "PAYLOAD_TOO_LARGE");
    const streamed = await postChunked("/api/execute", 1024 * 1024);
    expect(streamed.status).toBe(413);
    expect(streamed.body.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await call(t.url, "GET", "/api/ping")).status).toBe(200);
  });

  it("stdin over its limit → 413, for exec and for the stdin route", async () => {
    expectError(await exec({ command: "cat", stdin: "x".repeat(1025) }), "PAYLOAD_TOO_LARGE");
    expectError(await exec({ command: "cat", stdin: Buffer.alloc(1025).toString("base64"), stdinEncoding: "base64" }), "PAYLOAD_TOO_LARGE");
    expect((await exec({ command: "wc -c", stdin: "é".repeat(512) })).body.stdout.trim()).toBe("1024");
    await call(t.url, "POST", "/api/process/start", { command: "cat", processId: "stdin-limit" });
    expectError(await call(t.url, "POST", "/api/process/stdin-limit/stdin", { data: "y".repeat(2000) }), "PAYLOAD_TOO_LARGE");
    await call(t.url, "DELETE", "/api/process/stdin-limit");
  });

  it("bad stdin bodies → 400", async () => {
    await call(t.url, "POST", "/api/process/start", { command: "cat", processId: "stdin-bad" });
    expectError(await call(t.url, "POST", "/api/process/stdin-bad/stdin", { data: "@@@", encoding: "base64" }), "INVALID_REQUEST");
    expectError(await call(t.url, "POST", "/api/process/stdin-bad/stdin", { data: "x", extra: 1 }), "INVALID_REQUEST");
    expectError(await call(t.url, "POST", "/api/process/stdin-bad/stdin", { close: false }), "INVALID_REQUEST");
    expectError(await call(t.url, "POST", "/api/process/stdin-bad/stdin", "nope"), "INVALID_JSON");
    await call(t.url, "DELETE", "/api/process/stdin-bad");
  });

  it("too many live processes → 429 TOO_MANY_PROCESSES; room again after they end", async () => {
    for (const id of ["l1", "l2", "l3"]) expect((await call(t.url, "POST", "/api/process/start", { command: "sleep 10", processId: id })).status).toBe(200);
    expectError(await call(t.url, "POST", "/api/process/start", { command: "sleep 10" }), "TOO_MANY_PROCESSES");
    expectError(await exec({ command: "true" }), "TOO_MANY_PROCESSES");
    await call(t.url, "DELETE", "/api/process/kill-all");
    expect((await exec({ command: "true" })).status).toBe(200);
  });

  it("invalid signals → 400 INVALID_SIGNAL", async () => {
    await call(t.url, "POST", "/api/process/start", { command: "sleep 10", processId: "sig" });
    expectError(await call(t.url, "DELETE", "/api/process/sig?signal=SIGFOO"), "INVALID_SIGNAL");
    expectError(await call(t.url, "DELETE", "/api/process/sig?signal=99"), "INVALID_SIGNAL");
    expectError(await call(t.url, "DELETE", "/api/process/kill-all?signal=-1"), "INVALID_SIGNAL");
    expect((await call(t.url, "GET", "/api/process/sig")).body.process.status).toBe("running");
    await call(t.url, "DELETE", "/api/process/sig");
  });

  it("a bad resume position → 400 INVALID_REQUEST", async () => {
    await call(t.url, "POST", "/api/process/start", { command: "true", processId: "resume-bad" });
    expectError(await call(t.url, "GET", "/api/process/resume-bad/stream?since=-3"), "INVALID_REQUEST");
    const response = await fetch(`${t.url}/api/process/resume-bad/stream`, { headers: { "last-event-id": "abc" } });
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe("INVALID_REQUEST");
  });

  it("survives clients that abort mid-request and garbage on the wire", async () => {
    const controller = new AbortController();
    const pending = fetch(`${t.url}/api/execute`, { method: "POST", body: JSON.stringify({ command: "sleep 0.2; echo x" }), signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toThrow();

    const garbage = await new Promise<string>((resolve) => {
      const socket = connect(t.server.port, "127.0.0.1", () => socket.write("NOT HTTP AT ALL\r\n\r\n"));
      let text = "";
      socket.on("data", (data) => (text += data));
      socket.on("close", () => resolve(text));
      socket.on("error", () => resolve(text));
    });
    expect(garbage).toContain("400");

    await new Promise((resolve) => setTimeout(resolve, 300));
    const ping = await call(t.url, "GET", "/api/ping");
    expect(ping.status).toBe(200);
  });
});
