/**
 * Background processes at the container server: both start body shapes (ours and Cloudflare's
 * flat one), taken ids, listing by session, 404 on unknown ids, stdin written and closed (and the
 * errors when it cannot be), finished records kept for their window, cleanup, and base64 logs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, eventually, startTestServer, type TestServer } from "./helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ finishedRetentionMs: 400 });
});
afterAll(() => t.close());

const start = (body: unknown) => call(t.url, "POST", "/api/process/start", body);
const get = (id: string) => call(t.url, "GET", `/api/process/${id}`);
const waitForStatus = (id: string, status: string) =>
  eventually(async () => (await get(id)).body?.process?.status === status);

describe("background processes", () => {
  it("starts with the nested options body and reports the process record", async () => {
    const { status, body } = await start({ command: "echo hi; sleep 0.2", options: { processId: "nested", sessionId: "s-a" } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true });
    expect(body.process).toMatchObject({ id: "nested", command: "echo hi; sleep 0.2", status: "running", sessionId: "s-a" });
    expect(body.process.pid).toBeGreaterThan(0);
    expect(Date.parse(body.process.startTime)).not.toBeNaN();
    expect(await waitForStatus("nested", "completed")).toBe(true);
    const { body: done } = await get("nested");
    expect(done.process).toMatchObject({ exitCode: 0, stdoutBytes: 3, killed: false, timedOut: false });
    expect(Date.parse(done.process.endTime)).toBeGreaterThanOrEqual(Date.parse(done.process.startTime));
  });

  it("accepts Cloudflare's flat body (processId, timeoutMs, env, cwd)", async () => {
    const { body } = await start({ command: "echo $X; pwd", processId: "flat", env: { X: "flat-env" }, cwd: "/tmp", timeoutMs: 5000 });
    expect(body.process.id).toBe("flat");
    await waitForStatus("flat", "completed");
    const logs = await call(t.url, "GET", "/api/process/flat/logs");
    expect(logs.body).toMatchObject({ success: true, processId: "flat", stdout: "flat-env\n/tmp\n", stderr: "" });
  });

  it("lets nested options win over flat ones", async () => {
    const { body } = await start({ command: "true", processId: "flat-id", options: { processId: "nested-id" } });
    expect(body.process.id).toBe("nested-id");
  });

  it("rejects a process id that is taken (409), including by a finished record", async () => {
    await start({ command: "sleep 5", processId: "taken" });
    const again = await start({ command: "true", processId: "taken" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ success: false, code: "PROCESS_EXISTS", httpStatus: 409 });
    await call(t.url, "DELETE", "/api/process/taken");
    expect((await start({ command: "true", processId: "taken" })).status).toBe(409);
  });

  it("lists processes, filtered by session", async () => {
    await start({ command: "sleep 2", processId: "list-a", sessionId: "list-s1" });
    await start({ command: "sleep 2", processId: "list-b", sessionId: "list-s2" });
    const all = await call(t.url, "GET", "/api/process/list");
    const ids = all.body.processes.map((p: { id: string }) => p.id);
    expect(ids).toEqual(expect.arrayContaining(["list-a", "list-b"]));
    const s1 = await call(t.url, "GET", "/api/process/list?sessionId=list-s1");
    expect(s1.body.processes.map((p: { id: string }) => p.id)).toEqual(["list-a"]);
    await call(t.url, "DELETE", "/api/process/kill-all?sessionId=list-s1");
    await call(t.url, "DELETE", "/api/process/kill-all?sessionId=list-s2");
  });

  it("returns 404 PROCESS_NOT_FOUND for unknown ids on every route", async () => {
    const routes: [string, string, unknown?][] = [
      ["GET", "/api/process/nope"],
      ["GET", "/api/process/nope/logs"],
      ["GET", "/api/process/nope/stream"],
      ["DELETE", "/api/process/nope"],
      ["POST", "/api/process/nope/stdin", { data: "x" }],
    ];
    for (const [method, path, body] of routes) {
      const reply = await call(t.url, method, path, body);
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.body.code).toBe("PROCESS_NOT_FOUND");
    }
  });

  it("talks to a background process through stdin, then closes it", async () => {
    await start({ command: "while read line; do echo \"got:$line\"; done; echo eof", processId: "reader" });
    const write = await call(t.url, "POST", "/api/process/reader/stdin", { data: "one\ntwo\n" });
    expect(write.body).toMatchObject({ success: true, processId: "reader", bytesWritten: 8, closed: false });
    expect(await eventually(async () => (await call(t.url, "GET", "/api/process/reader/logs")).body.stdout === "got:one\ngot:two\n")).toBe(true);
    const b64 = await call(t.url, "POST", "/api/process/reader/stdin", { data: Buffer.from("three\n").toString("base64"), encoding: "base64" });
    expect(b64.body.bytesWritten).toBe(6);
    const close = await call(t.url, "POST", "/api/process/reader/stdin", { close: true });
    expect(close.body).toMatchObject({ closed: true, bytesWritten: 0 });
    expect(await waitForStatus("reader", "completed")).toBe(true);
    expect((await call(t.url, "GET", "/api/process/reader/logs")).body.stdout).toBe("got:one\ngot:two\ngot:three\neof\n");
  });

  it("refuses stdin to a closed stdin (STDIN_CLOSED) and to a finished process (PROCESS_NOT_RUNNING)", async () => {
    await start({ command: "sleep 1", processId: "closed-stdin" });
    await call(t.url, "POST", "/api/process/closed-stdin/stdin", { data: "bye", close: true });
    const closed = await call(t.url, "POST", "/api/process/closed-stdin/stdin", { data: "more" });
    expect(closed.status).toBe(409);
    expect(closed.body.code).toBe("STDIN_CLOSED");
    await call(t.url, "DELETE", "/api/process/closed-stdin");
    const finished = await call(t.url, "POST", "/api/process/closed-stdin/stdin", { data: "more" });
    expect(finished.status).toBe(409);
    expect(finished.body.code).toBe("PROCESS_NOT_RUNNING");
  });

  it("survives writes to a process that closed its stdin (EPIPE)", async () => {
    await start({ command: "exec 0<&-; echo closed; sleep 30", processId: "epipe" });
    // Written once the process has closed its stdin (it says so), while it still runs.
    expect(await eventually(async () => (await call(t.url, "GET", "/api/process/epipe/logs")).body.stdout === "closed\n")).toBe(true);
    const reply = await call(t.url, "POST", "/api/process/epipe/stdin", { data: "x".repeat(200_000) });
    expect(reply.status).toBe(409);
    expect(reply.body.code).toBe("STDIN_CLOSED");
    expect((await call(t.url, "GET", "/api/ping")).status).toBe(200);
    await call(t.url, "DELETE", "/api/process/epipe");
  });

  it("keeps finished records for the retention window, autoCleanup:false ones until cleanup", async () => {
    await start({ command: "true", processId: "auto" });
    await start({ command: "true", processId: "kept", options: { autoCleanup: false } });
    await waitForStatus("auto", "completed");
    await waitForStatus("kept", "completed");
    expect(await eventually(async () => (await get("auto")).status === 404, 3000)).toBe(true);
    expect((await get("kept")).status).toBe(200);
    const cleaned = await call(t.url, "POST", "/api/process/cleanup");
    expect(cleaned.body.success).toBe(true);
    expect(cleaned.body.cleaned).toBeGreaterThanOrEqual(1);
    expect((await get("kept")).status).toBe(404);
  });

  it("cleanup leaves running processes alone", async () => {
    await start({ command: "sleep 5", processId: "still-running" });
    await call(t.url, "POST", "/api/process/cleanup");
    expect((await get("still-running")).body.process.status).toBe("running");
    await call(t.url, "DELETE", "/api/process/still-running");
  });

  it("returns logs as base64 for a base64 process", async () => {
    await start({ command: "printf '\\xff\\x00'", processId: "b64", encoding: "base64" });
    await waitForStatus("b64", "completed");
    const { body } = await call(t.url, "GET", "/api/process/b64/logs");
    expect(body.encoding).toBe("base64");
    expect(Buffer.from(body.stdout, "base64")).toEqual(Buffer.from([0xff, 0]));
  });
});
