/**
 * Exec streams that lose their connection: resumed through a TCP proxy that cuts them mid-event
 * (the bytes received are the bytes written), and the exec's wait for a reader that went away —
 * backpressure kept through the grace window, the ring (and one truncated notice) after it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecEvent } from "../../protocol/events.ts";
import { ResumeCursor, resumeQueryParams, type ResumePoint } from "../../protocol/resume.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { resumableEvents } from "../../src/rpc/resumable-stream.ts";
import { startCuttingProxy, type CuttingProxy } from "../cutting-proxy.ts";
import { call, eventually, openStream, startTestServer, type TestServer } from "./helpers.ts";

type Output = Extract<ExecEvent, { type: "stdout" | "stderr" }>;

/** Opens an exec stream (or resumes one) at `url`; a failed request is an error like a dropped connection. */
async function open(url: string, path: string, body?: unknown): Promise<ReadableStream<Uint8Array>> {
  const response = await fetch(url + path, body === undefined ? {} : { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  if (!response.ok || !response.body) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.body;
}

/** An exec's events through `url`, resumed from where each connection broke off, as the client does. */
async function followExec(url: string, processId: string, first: ReadableStream<Uint8Array>, cursor = new ResumeCursor()): Promise<ExecEvent[]> {
  const events: ExecEvent[] = [];
  const resumed = resumableEvents<ExecEvent>(first, {
    describe: processId,
    cursor,
    retry: { attempts: 5, baseDelayMs: 5 },
    isFinal: (event) => event.type === "complete" || event.type === "error",
    reopen: (point: ResumePoint) => open(url, `/api/execute/${processId}/stream?${new URLSearchParams(resumeQueryParams(point))}`),
  });
  for await (const event of resumed) events.push(event);
  return events;
}

const outputOf = (events: ExecEvent[], stream: "stdout" | "stderr") =>
  events.filter((e): e is Output => e.type === stream).map((e) => e.data).join("");
const lines = (count: number, prefix = "") => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}\n`).join("");

describe("an exec stream cut by the network, resumed exactly", () => {
  let t: TestServer;
  let proxy: CuttingProxy;
  beforeAll(async () => {
    t = await startTestServer();
    // Cuts at uneven points, so they land inside events (and inside their JSON).
    proxy = await startCuttingProxy(t.url, { cutAfterBytes: (n) => (n < 8 ? 90_000 + n * 37_777 : undefined) });
  });
  afterAll(async () => {
    await proxy.close();
    await t.close();
  });

  it("delivers every byte of `seq 1 300000` once, in order, across several cuts in the middle of events", async () => {
    const before = proxy.cuts;
    const id = "seq-cut";
    const events = await followExec(proxy.url, id, await open(proxy.url, "/api/execute/stream", { command: "seq 1 300000", processId: id }));
    expect(outputOf(events, "stdout")).toBe(lines(300_000));
    expect(proxy.cuts - before).toBeGreaterThanOrEqual(5);
    // Some events came in two parts (one id, two offsets): the resume went on inside them.
    const output = events.filter((e): e is Output => e.type === "stdout");
    const ids = output.map((e) => e.seq);
    expect(new Set(ids).size).toBeLessThan(ids.length);
    for (let i = 1; i < output.length; i++) expect(output[i]!.offset).toBe(output[i - 1]!.offset + Buffer.byteLength(output[i - 1]!.data));
    expect(events.some((e) => e.type === "truncated")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "complete", exitCode: 0, result: { success: true } });
  });

  it("keeps both streams of an interleaved stdout/stderr loop whole", async () => {
    const id = "interleaved-cut";
    const command = "for i in $(seq 1 20000); do echo out-$i; echo err-$i >&2; done";
    const events = await followExec(proxy.url, id, await open(proxy.url, "/api/execute/stream", { command, processId: id }));
    expect(outputOf(events, "stdout")).toBe(lines(20_000, "out-"));
    expect(outputOf(events, "stderr")).toBe(lines(20_000, "err-"));
    expect(events.at(-1)).toMatchObject({ type: "complete", exitCode: 0 });
  });
});

describe("an exec whose reader went away waits for it", () => {
  const retention = 256 * 1024;
  const total = 6_000_000;
  /** Says hello, waits for the test's go, then writes `total` bytes. */
  const command = (flag: string) => `echo hello; while [ ! -e ${flag} ]; do sleep 0.01; done; head -c ${total} /dev/zero | tr '\\0' 'a'`;

  /** Starts the command, reads up to its hello, and goes away (nothing else is in flight). */
  async function startAndLeave(server: TestServer, id: string): Promise<ResumeCursor> {
    const controller = new AbortController();
    const response = await openStream(server.url, "/api/execute/stream", { body: { command: command(`go-${id}`), processId: id }, signal: controller.signal });
    const cursor = new ResumeCursor();
    for await (const event of readEventStream<ExecEvent>(response.body!)) {
      cursor.passed(event);
      if (event.type === "stdout") break;
    }
    controller.abort();
    const record = server.server.context.processes.get(id);
    expect(await eventually(() => record.execReaders!.waiting)).toBe(true);
    writeFileSync(join(server.workspace, `go-${id}`), "");
    return cursor;
  }

  it("keeps its backpressure through the grace window, and a reader that comes back gets every byte", async () => {
    const server = await startTestServer({ defaultLogRetentionBytes: retention });
    try {
      const cursor = await startAndLeave(server, "held");
      const record = server.server.context.processes.get("held");
      // The command fills the log and then blocks, as on a pipe nobody reads: nothing is dropped.
      const written = () => record.log.streamBytes("stdout");
      expect(await eventually(() => written() >= retention)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stalled = written();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(written()).toBe(stalled);
      expect(stalled).toBeLessThan(total / 4);
      expect(record.status).toBe("running");
      expect(record.log.droppedEvents).toBe(0);

      const after = await followExec(server.url, "held", await open(server.url, `/api/execute/held/stream?${new URLSearchParams(resumeQueryParams(cursor.point))}`), cursor);
      expect(after.some((e) => e.type === "truncated")).toBe(false);
      expect(outputOf(after, "stdout")).toBe("a".repeat(total));
      expect(after.at(-1)).toMatchObject({ type: "complete", exitCode: 0 });
      expect(record.execReaders!.waiting).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("after the grace window falls back to the ring; a late reader is told once what it missed", async () => {
    const server = await startTestServer({ defaultLogRetentionBytes: retention, execReattachGraceMs: 300 });
    try {
      const cursor = await startAndLeave(server, "late");
      expect(await eventually(async () => (await call(server.url, "GET", "/api/process/late")).body.process.status === "completed")).toBe(true);

      const path = `/api/execute/late/stream?${new URLSearchParams(resumeQueryParams(cursor.point))}`;
      const after = await followExec(server.url, "late", await open(server.url, path), cursor);
      const notices = after.filter((e) => e.type === "truncated");
      expect(notices).toHaveLength(1);
      const notice = notices[0] as Extract<ExecEvent, { type: "truncated" }>;
      const received = outputOf(after, "stdout").length;
      expect(notice.stdoutDropped + received).toBe(total);
      expect(notice.stderrDropped).toBe(0);
      expect(received).toBeLessThanOrEqual(retention);
      expect(after.at(-1)).toMatchObject({ type: "complete", exitCode: 0 });

      // Resumed after the notice's id, the stream does not tell it again.
      const again = await followExec(server.url, "late", await open(server.url, `/api/execute/late/stream?since=${notice.seq}`));
      expect(again.some((e) => e.type === "truncated")).toBe(false);
      expect(outputOf(again, "stdout")).toBe(outputOf(after, "stdout"));
    } finally {
      await server.close();
    }
  });

  it("stops waiting when the command is killed", async () => {
    const server = await startTestServer({ defaultLogRetentionBytes: retention });
    try {
      await startAndLeave(server, "killed-waiting");
      const record = server.server.context.processes.get("killed-waiting");
      expect(await eventually(() => record.log.streamBytes("stdout") >= retention)).toBe(true);
      const killed = await call(server.url, "DELETE", "/api/process/killed-waiting");
      expect(killed.body).toMatchObject({ status: "killed" });
      expect(record.execReaders!.waiting).toBe(false);
    } finally {
      await server.close();
    }
  });
});
