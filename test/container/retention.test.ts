/**
 * Bounded retention over real streams: old output is dropped once a log's budget is spent and late
 * readers are told exactly how much, a per-process budget is honoured, a slow exec reader slows the
 * command rather than losing output, and a slow reader of a live process gets a truncated notice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { call, collectEvents, eventually, openStream, startTestServer, type TestServer } from "./helpers.ts";

const RETENTION = 64 * 1024;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ defaultLogRetentionBytes: RETENTION });
});
afterAll(() => t.close());

type Output = Extract<LogEvent, { type: "stdout" | "stderr" }>;
const waitDone = (id: string) =>
  eventually(async () => !["running", "starting"].includes((await call(t.url, "GET", `/api/process/${id}`)).body.process.status));

describe("bounded retention", () => {
  // 1 MB of numbered lines, written in many separate chunks.
  const command = "for i in $(seq 1 20); do seq -f \"%08g\" $((i*10000)) $((i*10000+5000)); sleep 0.002; done";

  it("drops old output, then tells late readers exactly what they missed", async () => {
    await call(t.url, "POST", "/api/process/start", { command, processId: "big" });
    expect(await waitDone("big")).toBe(true);
    const info = (await call(t.url, "GET", "/api/process/big")).body.process;
    expect(info.stdoutBytes).toBeGreaterThan(RETENTION * 4);

    const events = await collectEvents<LogEvent>(await openStream(t.url, "/api/process/big/stream"));
    const truncated = events[0] as Extract<LogEvent, { type: "truncated" }>;
    expect(truncated).toMatchObject({ type: "truncated", processId: "big" });
    // `exit` follows the final status, outside the log (no seq).
    expect(events.at(-1)).toMatchObject({ type: "exit", processId: "big" });
    const rest = events.slice(1, -1);
    expect(rest.some((e) => e.type === "truncated")).toBe(false);
    // The events after the notice are contiguous and end with the final status.
    const seqs = rest.map((e) => e.seq!);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
    expect(truncated.droppedEvents).toBe(seqs[0]! - 1);
    // Its id is the last dropped event's: resuming after it does not deliver it again.
    expect(truncated.seq).toBe(seqs[0]! - 1);
    const afterNotice = await collectEvents<LogEvent>(await openStream(t.url, "/api/process/big/stream", { headers: { "last-event-id": String(truncated.seq) } }));
    expect(afterNotice.slice(0, -1).map((e) => e.seq)).toEqual(seqs);
    expect(afterNotice.at(-1)).toMatchObject({ type: "exit", processId: "big" });
    const retained = rest.filter((e): e is Output => e.type === "stdout");
    const retainedBytes = retained.reduce((n, e) => n + Buffer.byteLength(e.data), 0);
    expect(truncated.droppedBytes + retainedBytes).toBe(info.stdoutBytes);
    expect(truncated).toMatchObject({ stdoutDropped: truncated.droppedBytes, stderrDropped: 0 });
    expect(retained[0]!.offset).toBe(truncated.droppedBytes);
    expect(retainedBytes).toBeLessThanOrEqual(RETENTION);
    expect(rest.at(-1)).toMatchObject({ type: "status", status: "completed" });

    // The logs route reports the same cut.
    const logs = (await call(t.url, "GET", "/api/process/big/logs")).body;
    expect(logs.stdoutDropped).toBe(truncated.droppedBytes);
    expect(Buffer.byteLength(logs.stdout)).toBe(retainedBytes);

    // Resuming from a dropped id: only the events after it that are gone are counted.
    const resumed = await collectEvents<LogEvent>(await openStream(t.url, "/api/process/big/stream?since=5"));
    expect(resumed[0]).toMatchObject({ type: "truncated", droppedEvents: seqs[0]! - 1 - 5 });
    expect(resumed.slice(1, -1).map((e) => e.seq)).toEqual(seqs);
  });

  it("honours a per-process logRetentionBytes", async () => {
    await call(t.url, "POST", "/api/process/start", { command, processId: "big-kept", options: { logRetentionBytes: 4 * 1024 * 1024 } });
    expect(await waitDone("big-kept")).toBe(true);
    const events = await collectEvents<LogEvent>(await openStream(t.url, "/api/process/big-kept/stream"));
    expect(events.some((e) => e.type === "truncated")).toBe(false);
  });

  it("a slow exec-stream reader slows the command down instead of losing output", async () => {
    const total = 4 * 1024 * 1024;
    const response = await openStream(t.url, "/api/execute/stream", { body: { command: `head -c ${total} /dev/zero | tr '\\0' 'z'` } });
    let bytes = 0;
    let truncations = 0;
    let reads = 0;
    for await (const event of readEventStream<ExecEvent>(response.body!)) {
      if (event.type === "truncated") truncations++;
      if (event.type === "stdout") {
        bytes += event.data.length;
        // Be slow at first, far slower than the writer.
        if (reads++ < 20) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    expect(truncations).toBe(0);
    expect(bytes).toBe(total);
  });

  it("an unpinned slow reader of a live process gets a truncated notice and continues", async () => {
    await call(t.url, "POST", "/api/process/start", { command: "sleep 0.3; head -c 30000000 /dev/zero | tr '\\0' 'y'", processId: "live-big" });
    const response = await openStream(t.url, "/api/process/live-big/stream");
    let first = true;
    const events: LogEvent[] = [];
    for await (const event of readEventStream<LogEvent>(response.body!)) {
      events.push(event);
      if (first) {
        first = false;
        await new Promise((resolve) => setTimeout(resolve, 800)); // the writer runs far ahead meanwhile
      }
    }
    const notices = events.filter((e) => e.type === "truncated");
    expect(notices.length).toBeGreaterThanOrEqual(1);
    const output = events.filter((e): e is Output => e.type === "stdout");
    const received = output.reduce((n, e) => n + e.data.length, 0);
    const dropped = notices.reduce((n, e) => n + (e as { droppedBytes: number }).droppedBytes, 0);
    expect(received + dropped).toBe(30_000_000);
    expect(events.at(-2)).toMatchObject({ type: "status", status: "completed" });
    expect(events.at(-1)).toMatchObject({ type: "exit", status: "completed", exitCode: 0 });
  });
});
