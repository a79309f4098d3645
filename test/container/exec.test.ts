/**
 * `POST /api/execute`, the buffered exec every caller ends up at: shell strings and direct argv, exit
 * codes and `success`, a clean env, cwd, stdin then EOF, base64 output, the buffered cap without a
 * split character, no lost bytes from a fast writer, caller-given ids, spawn failures, and 100 execs
 * at once. Also run against the built image's server by `npm run test:image`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, eventually, startTestServer, type TestServer } from "./helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const exec = (body: unknown) => call(t.url, "POST", "/api/execute", body);

describe("ping", () => {
  it("reports ok with a boot id", async () => {
    const { status, body } = await call(t.url, "GET", "/api/ping");
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, status: "ok" });
    expect(body.instanceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof body.timestamp).toBe("string");
  });
});

describe("POST /api/execute", () => {
  it("runs a shell string and returns both streams", async () => {
    const { status, body } = await exec({ command: "echo out; echo err >&2" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, exitCode: 0, stdout: "out\n", stderr: "err\n", command: "echo out; echo err >&2" });
    expect(body.stdoutTruncated).toBe(false);
    expect(body.pid).toBeGreaterThan(0);
    expect(body.duration).toBeGreaterThanOrEqual(0);
    expect(Date.parse(body.timestamp)).not.toBeNaN();
  });

  it("executes a program with args directly, without a shell", async () => {
    const { body } = await exec({ command: "printf", args: ["%s|%s", "a b", "$HOME"] });
    expect(body.stdout).toBe("a b|$HOME");
  });

  it("reports exit codes; success means exit code 0", async () => {
    const { status, body } = await exec({ command: "exit 7" });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: false, exitCode: 7, killed: false, timedOut: false });
  });

  it("gives commands a clean env: base + per-call, not the server's", async () => {
    process.env.SERVER_SECRET_FOR_TEST = "leak";
    const { body } = await exec({ command: "env", env: { FOO: "bar baz" } });
    const env = Object.fromEntries(body.stdout.trim().split("\n").map((line: string) => line.split(/=(.*)/s).slice(0, 2)));
    expect(env.FOO).toBe("bar baz");
    expect(env.SERVER_SECRET_FOR_TEST).toBeUndefined();
    expect(env.HOME).toBe(t.home);
    expect(env.PATH).toBeTruthy();
    expect(env.LANG).toBeTruthy();
  });

  it("runs in the workspace by default; relative cwd is resolved against it", async () => {
    mkdirSync(join(t.workspace, "sub"), { recursive: true });
    expect((await exec({ command: "pwd" })).body.stdout.trim()).toBe(t.workspace);
    expect((await exec({ command: "pwd", cwd: "sub" })).body.stdout.trim()).toBe(join(t.workspace, "sub"));
    expect((await exec({ command: "pwd", cwd: "/tmp" })).body.stdout.trim()).toBe("/tmp");
  });

  it("feeds stdin bytes then EOF; without stdin, reads see EOF at once", async () => {
    expect((await exec({ command: "wc -c", stdin: "hello" })).body.stdout.trim()).toBe("5");
    expect((await exec({ command: "cat", stdin: "AAEC/w==", stdinEncoding: "base64", encoding: "base64" })).body.stdout).toBe("AAEC/w==");
    expect((await exec({ command: "cat" })).body.stdout).toBe("");
  });

  it("does not fail when the program stops reading stdin early", async () => {
    const { body } = await exec({ command: "head -c 1", stdin: "x".repeat(1024 * 1024) });
    expect(body).toMatchObject({ exitCode: 0, stdout: "x" });
  });

  it("returns binary output as base64 on request", async () => {
    const { body } = await exec({ command: "printf '\\x00\\xff\\xfe\\x80'", encoding: "base64" });
    expect(body.encoding).toBe("base64");
    expect(Buffer.from(body.stdout, "base64")).toEqual(Buffer.from([0, 0xff, 0xfe, 0x80]));
  });

  it("caps buffered output and flags the truncation, without splitting a character", async () => {
    const { body } = await exec({ command: "printf 'ab€cd'; head -c 5000 /dev/zero >&2", maxOutputBytes: 4 });
    // 'ab€' is 5 bytes; a 4-byte cap must not keep half of '€'.
    expect(body.stdout).toBe("ab");
    expect(body.stdoutTruncated).toBe(true);
    expect(body.stderr.length).toBe(4);
    expect(body.stderrTruncated).toBe(true);
  });

  it("keeps every byte of a fast writer", async () => {
    const { body } = await exec({ command: "head -c 3000000 /dev/zero | tr '\\0' 'x'" });
    expect(body.stdout.length).toBe(3_000_000);
    expect(body.stdoutTruncated).toBe(false);
  });

  it("honours a caller-given process id and rejects a duplicate while it runs", async () => {
    // The first runs until the test lets it end (a file appears), so the second surely meets it running.
    const first = exec({ command: "until [ -e exec-dup-gate ]; do sleep 0.02; done", processId: "exec-dup" });
    expect(await eventually(async () => (await call(t.url, "GET", "/api/process/exec-dup")).body.process?.status === "running")).toBe(true);
    const second = await exec({ command: "true", processId: "exec-dup" });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe("PROCESS_EXISTS");
    await exec({ command: "touch exec-dup-gate" });
    expect((await first).body).toMatchObject({ exitCode: 0, processId: "exec-dup" });
  });

  it("reports a command that cannot start as SPAWN_FAILED and keeps an error record", async () => {
    const missing = await exec({ command: "definitely-not-a-program", args: ["x"] });
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ success: false, code: "SPAWN_FAILED", httpStatus: 422 });
    expect(missing.body.message).toContain("command not found: definitely-not-a-program");
    const id = missing.body.context.processId;
    const record = await call(t.url, "GET", `/api/process/${id}`);
    expect(record.body.process).toMatchObject({ status: "error", error: expect.stringContaining("command not found") });

    const badCwd = await exec({ command: "pwd", cwd: "/does/not/exist" });
    expect(badCwd.status).toBe(422);
    expect(badCwd.body.message).toContain("working directory does not exist");

    writeFileSync(join(t.workspace, "file.txt"), "x");
    const fileCwd = await exec({ command: "pwd", cwd: "file.txt" });
    expect(fileCwd.body.message).toContain("not a directory");

    const shellMissing = await exec({ command: "definitely-not-a-program" });
    expect(shellMissing.body).toMatchObject({ exitCode: 127, success: false });
  });

  it("runs 100 execs concurrently, each with its own output", async () => {
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => exec({ command: `echo ${i}; echo e${i} >&2` })));
    replies.forEach((reply, i) => {
      expect(reply.status).toBe(200);
      expect(reply.body.stdout).toBe(`${i}\n`);
      expect(reply.body.stderr).toBe(`e${i}\n`);
    });
    const ids = new Set(replies.map((reply) => reply.body.processId));
    expect(ids.size).toBe(100);
  });

  it("keeps a finished exec reachable by id but out of the process list", async () => {
    const { body } = await exec({ command: "echo kept", processId: "kept-after-exec" });
    expect(body.exitCode).toBe(0);
    const record = await call(t.url, "GET", "/api/process/kept-after-exec");
    expect(record.body.process).toMatchObject({ id: "kept-after-exec", status: "completed", exitCode: 0 });
    expect((await call(t.url, "GET", "/api/process/kept-after-exec/logs")).body).toMatchObject({ stdout: "kept\n", stderr: "" });
    const ids = (path: string) => call(t.url, "GET", path).then((reply) => reply.body.processes.map((p: { id: string }) => p.id));
    expect(await ids("/api/process/list")).not.toContain("kept-after-exec");
    expect(await ids("/api/process/list?include=exec")).toContain("kept-after-exec");
    expect((await call(t.url, "GET", "/api/process/list?include=zombies")).body.code).toBe("INVALID_REQUEST");
    // The id of a finished exec is free again: a new exec replaces the kept record.
    expect((await exec({ command: "echo again", processId: "kept-after-exec" })).body).toMatchObject({ exitCode: 0, stdout: "again\n" });
  });
});
