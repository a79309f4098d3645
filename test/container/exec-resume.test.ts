/**
 * Finished exec records: kept a short while so a client whose exec stream broke resumes it from the
 * process log by Last-Event-ID, bounded by a time window, a record count and a byte budget.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { call, collectEvents, eventually, openStream, startTestServer, type TestServer } from "./helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const exec = (server: TestServer, body: unknown) => call(server.url, "POST", "/api/execute", body);
const status = async (server: TestServer, id: string) => (await call(server.url, "GET", `/api/process/${id}`)).status;
const outputOf = (events: (ExecEvent | LogEvent)[], stream: "stdout" | "stderr") =>
  events.filter((e) => e.type === stream).map((e) => (e as { data: string }).data).join("");

describe("resuming an exec stream after the command ended", () => {
  it("replays exactly the events after Last-Event-ID, ending with the final status", async () => {
    // Writes a little, waits for the test to cut the stream and say go, then writes the rest.
    const command = "echo one; sleep 0.05; echo two; while [ ! -e go ]; do sleep 0.01; done; seq 1 3000; echo err >&2; exit 3";
    const expectedStdout = `one\ntwo\n${Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("")}`;
    const controller = new AbortController();
    const response = await openStream(t.url, "/api/execute/stream", { body: { command, processId: "cut-exec" }, signal: controller.signal });
    const before: ExecEvent[] = [];
    try {
      for await (const event of readEventStream<ExecEvent>(response.body!)) {
        before.push(event);
        if (outputOf(before, "stdout").includes("two\n")) break;
      }
    } finally {
      controller.abort();
    }
    expect(before[0]).toMatchObject({ type: "start", processId: "cut-exec", seq: 1 });
    const lastSeq = before.at(-1)!.seq!;
    expect(before.map((e) => e.seq)).toEqual(before.map((_, i) => i + 1));

    writeFileSync(join(t.workspace, "go"), "");
    expect(await eventually(async () => (await call(t.url, "GET", "/api/process/cut-exec")).body.process.status === "failed")).toBe(true);

    for (const resume of [{ headers: { "last-event-id": String(lastSeq) } }, { path: `?since=${lastSeq}` }]) {
      const path = `/api/process/cut-exec/stream${resume.path ?? ""}`;
      const all = await collectEvents<LogEvent>(await openStream(t.url, path, { headers: resume.headers ?? {} }));
      // The log stream's `exit` comes last, outside the log.
      expect(all.at(-1)).toMatchObject({ type: "exit", status: "failed", exitCode: 3 });
      const after = all.slice(0, -1);
      expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => lastSeq + 1 + i));
      expect(after.some((e) => e.type === "truncated")).toBe(false);
      expect(outputOf(before, "stdout") + outputOf(after, "stdout")).toBe(expectedStdout);
      expect(outputOf(after, "stderr")).toBe("err\n");
      expect(after.filter((e) => e.type === "status")).toHaveLength(1);
      expect(after.at(-1)).toMatchObject({ type: "status", status: "failed", exitCode: 3, processId: "cut-exec" });
    }
    // Resuming after the last event: nothing more, the stream just ends.
    const last = (await call(t.url, "GET", "/api/process/cut-exec")).body.process.lastSeq;
    expect(await collectEvents(await openStream(t.url, "/api/process/cut-exec/stream", { headers: { "last-event-id": String(last) } }))).toEqual([]);
  });

  it("keeps a failed start too, but does not list it", async () => {
    const missing = await exec(t, { command: "definitely-not-a-program", args: [], processId: "never-ran" });
    expect(missing.status).toBe(422);
    expect((await call(t.url, "GET", "/api/process/never-ran")).body.process).toMatchObject({ status: "error" });
    const listed = (await call(t.url, "GET", "/api/process/list")).body.processes.map((p: { id: string }) => p.id);
    expect(listed).not.toContain("never-ran");
  });

  it("lets the buffered result and the stdin bytes go once they are used", async () => {
    const stdin = "x".repeat(1_000_000);
    const { body } = await exec(t, { command: "wc -c; head -c 3000000 /dev/zero", stdin });
    expect(body.stdout.startsWith("1000000\n")).toBe(true);
    const record = t.server.context.processes.find(body.processId)!;
    expect(record.status).toBe("completed");
    expect(record.capture).toBeUndefined();
    expect(record.spec.stdin).toBeUndefined();
    // What stays is the exec log window, not the 3 MB result.
    expect(record.log.retainedBytes).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
  });

  it("cleanup leaves kept execs alone unless asked with include=exec", async () => {
    const server = await startTestServer();
    try {
      await exec(server, { command: "true", processId: "x1" });
      await exec(server, { command: "true", processId: "x2" });
      expect((await call(server.url, "POST", "/api/process/cleanup")).body.cleaned).toBe(0);
      expect(await status(server, "x1")).toBe(200);
      expect((await call(server.url, "POST", "/api/process/cleanup?include=exec")).body.cleaned).toBe(2);
      expect(await status(server, "x1")).toBe(404);
      expect(server.server.context.processes.finishedExecs).toEqual({ count: 0, bytes: 0 });
    } finally {
      await server.close();
    }
  });
});

describe("resuming an exec stream as exec events", () => {
  it("sends the exec events after Last-Event-ID or ?since=, ending with complete and the container's result", async () => {
    const command = "echo one; while [ ! -e go-events ]; do sleep 0.01; done; seq 1 2000; echo err >&2; exit 3";
    const expectedStdout = `one\n${Array.from({ length: 2000 }, (_, i) => `${i + 1}\n`).join("")}`;
    const controller = new AbortController();
    const response = await openStream(t.url, "/api/execute/stream", { body: { command, processId: "exec-events" }, signal: controller.signal });
    const before: ExecEvent[] = [];
    try {
      for await (const event of readEventStream<ExecEvent>(response.body!)) {
        before.push(event);
        if (outputOf(before, "stdout") === "one\n") break;
      }
    } finally {
      controller.abort();
    }
    const lastSeq = before.at(-1)!.seq!;

    // While the command runs: the resumed stream follows it to its end.
    const resumed = await openStream(t.url, "/api/execute/exec-events/stream", { headers: { "last-event-id": String(lastSeq) } });
    writeFileSync(join(t.workspace, "go-events"), "");
    const after = await collectEvents<ExecEvent>(resumed);
    expect(after.map((e) => e.seq)).toEqual(after.map((_, i) => lastSeq + 1 + i));
    expect(outputOf(before, "stdout") + outputOf(after, "stdout")).toBe(expectedStdout);
    expect(outputOf(after, "stderr")).toBe("err\n");
    expect(after.filter((e) => e.type === "complete")).toHaveLength(1);
    expect(after.at(-1)).toMatchObject({ type: "complete", exitCode: 3, result: { success: false, exitCode: 3, processId: "exec-events" } });

    // After it ended: the same events again, from the kept record.
    expect(await collectEvents<ExecEvent>(await openStream(t.url, `/api/execute/exec-events/stream?since=${lastSeq}`))).toEqual(after);
    // From the start: the start event first.
    expect((await collectEvents<ExecEvent>(await openStream(t.url, "/api/execute/exec-events/stream")))[0]).toMatchObject({ type: "start", seq: 1 });
  });

  it("ends a timed-out exec's stream with an EXECUTION_TIMEOUT error carrying the result, on resume too", async () => {
    const controller = new AbortController();
    const response = await openStream(t.url, "/api/execute/stream", {
      body: { command: "echo early; echo late >&2; sleep 30", processId: "exec-timeout", timeout: 300 },
      signal: controller.signal,
    });
    const before: ExecEvent[] = [];
    try {
      for await (const event of readEventStream<ExecEvent>(response.body!)) {
        before.push(event);
        if (outputOf(before, "stdout") === "early\n") break;
      }
    } finally {
      controller.abort();
    }
    const lastSeq = before.at(-1)!.seq!;
    const after = await collectEvents<ExecEvent>(await openStream(t.url, "/api/execute/exec-timeout/stream", { headers: { "last-event-id": String(lastSeq) } }));
    const end = after.at(-1)!;
    expect(end).toMatchObject({ type: "error", code: "EXECUTION_TIMEOUT", error: expect.stringContaining("300 ms") });
    expect(end.seq).toBe(lastSeq + after.length);
    // The result so far: its output came as events.
    expect((end as { result?: unknown }).result).toMatchObject({ success: false, exitCode: 124, timedOut: true, killed: true, stdout: "", processId: "exec-timeout" });
    expect(after.some((e) => e.type === "complete")).toBe(false);
    expect(outputOf(before, "stdout") + outputOf(after, "stdout")).toBe("early\n");
    expect(outputOf(before, "stderr") + outputOf(after, "stderr")).toBe("late\n");
    expect((await call(t.url, "GET", "/api/process/exec-timeout")).body.process).toMatchObject({ status: "killed", exitCode: 124, timedOut: true });
  });

  it("answers 404 for an unknown id and for a background process", async () => {
    expect((await call(t.url, "GET", "/api/execute/no-such-exec/stream")).body).toMatchObject({ code: "PROCESS_NOT_FOUND" });
    await call(t.url, "POST", "/api/process/start", { command: "true", processId: "in-background" });
    const background = await call(t.url, "GET", "/api/execute/in-background/stream");
    expect(background.status).toBe(404);
    expect(background.body.message).toContain("/api/process/in-background/stream");
  });
});

describe("bounds on kept exec records", () => {
  it("forgets them after the retention window", async () => {
    const server = await startTestServer({ finishedExecRetentionMs: 150 });
    try {
      await exec(server, { command: "true", processId: "short-lived" });
      expect(await status(server, "short-lived")).toBe(200);
      expect(await eventually(async () => (await status(server, "short-lived")) === 404, 3000)).toBe(true);
      expect(server.server.context.processes.finishedExecs.count).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("keeps at most maxFinishedExecs, the newest", async () => {
    const server = await startTestServer({ maxFinishedExecs: 2 });
    try {
      for (const id of ["n1", "n2", "n3", "n4"]) await exec(server, { command: "true", processId: id });
      expect([await status(server, "n1"), await status(server, "n2")]).toEqual([404, 404]);
      expect([await status(server, "n3"), await status(server, "n4")]).toEqual([200, 200]);
    } finally {
      await server.close();
    }
  });

  it("keeps their logs within maxFinishedExecBytes however much the commands wrote", async () => {
    const budget = 512 * 1024;
    const server = await startTestServer({ maxFinishedExecBytes: budget });
    try {
      for (let i = 0; i < 20; i++) {
        const { body } = await exec(server, { command: "head -c 200000 /dev/zero | tr '\\0' 'b'", processId: `b${i}` });
        expect(body.stdout.length).toBe(200_000);
        expect(server.server.context.processes.finishedExecs.bytes).toBeLessThanOrEqual(budget);
      }
      const kept = server.server.context.processes.finishedExecs.count;
      expect(kept).toBeGreaterThanOrEqual(1);
      expect(kept).toBeLessThan(4);
      expect(await status(server, "b19")).toBe(200);
      expect(await status(server, "b0")).toBe(404);
    } finally {
      await server.close();
    }
  });

  it("keeps none with maxFinishedExecs 0", async () => {
    const server = await startTestServer({ maxFinishedExecs: 0 });
    try {
      expect((await exec(server, { command: "echo x", processId: "unkept" })).body.stdout).toBe("x\n");
      expect(await status(server, "unkept")).toBe(404);
    } finally {
      await server.close();
    }
  });
});
