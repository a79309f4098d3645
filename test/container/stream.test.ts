/**
 * Exec and process-log streams over HTTP: SSE framing with the seq as id, stdout/stderr order, no line
 * buffering, keepalives, resuming after Last-Event-ID or ?since= with no duplicates or gaps, no split
 * characters, base64 with byte offsets, heavy output with every line arriving, and readers that go
 * away without killing the process unless asked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import { call, collectEvents, collectMessages, eventually, groupMembers, openStream, startTestServer, type TestServer } from "./helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ keepaliveMs: 100 });
});
afterAll(() => t.close());

const execStream = (body: unknown, signal?: AbortSignal) => openStream(t.url, "/api/execute/stream", { body, ...(signal ? { signal } : {}) });
type Output = Extract<ExecEvent, { type: "stdout" | "stderr" }>;

async function rawText(response: Response): Promise<string> {
  return await response.text();
}

describe("SSE framing", () => {
  it("frames every exec event as id/event/data with the seq as id, in log order", async () => {
    const response = await execStream({ command: "echo one; echo two >&2; echo three" });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const text = await rawText(response);
    const frames = text.split("\n\n").filter((frame) => frame && !frame.startsWith(":"));
    const events = frames.map((frame) => {
      const lines = frame.split("\n");
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^id: \d+$/);
      expect(lines[1]).toMatch(/^event: \w+$/);
      expect(lines[2]).toMatch(/^data: \{/);
      const data = JSON.parse(lines[2]!.slice("data: ".length));
      expect(data.type).toBe(lines[1]!.slice("event: ".length));
      expect(data.seq).toBe(Number(lines[0]!.slice("id: ".length)));
      return data as ExecEvent;
    });
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]).toMatchObject({ type: "start", command: "echo one; echo two >&2; echo three" });
    expect((events[0] as { pid?: number }).pid).toBeGreaterThan(0);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ type: "complete", exitCode: 0, result: { success: true, exitCode: 0, stdout: "", stderr: "" } });
    const output = events.filter((event): event is Output => event.type === "stdout" || event.type === "stderr");
    expect(output.filter((e) => e.type === "stdout").map((e) => e.data).join("")).toBe("one\nthree\n");
    expect(output.filter((e) => e.type === "stderr").map((e) => e.data).join("")).toBe("two\n");
  });

  it("keeps stdout/stderr order as written", async () => {
    const command = "for i in 1 2 3 4 5; do echo o$i; sleep 0.01; echo e$i >&2; sleep 0.01; done";
    const events = await collectEvents<ExecEvent>(await execStream({ command }));
    const order = events.filter((e): e is Output => e.type === "stdout" || e.type === "stderr").map((e) => e.data.trim());
    expect(order).toEqual(["o1", "e1", "o2", "e2", "o3", "e3", "o4", "e4", "o5", "e5"]);
  });

  it("does not line-buffer: a partial line arrives before the process ends", async () => {
    const response = await execStream({ command: "printf 'progress 10%%'; sleep 1; echo; echo done" });
    const started = Date.now();
    let firstOutputAfter = -1;
    const events: ExecEvent[] = [];
    for await (const event of (await import("../../protocol/sse.ts")).readEventStream<ExecEvent>(response.body!)) {
      if (event.type === "stdout" && firstOutputAfter < 0) {
        firstOutputAfter = Date.now() - started;
        expect(event.data).toBe("progress 10%");
      }
      events.push(event);
    }
    expect(firstOutputAfter).toBeGreaterThanOrEqual(0);
    expect(firstOutputAfter).toBeLessThan(700);
  });

  it("sends a keepalive comment at once, then on idle streams", async () => {
    const messages = await rawText(await execStream({ command: "sleep 0.5; echo late" }));
    expect(messages.startsWith(": keepalive\n\n")).toBe(true);
    // Beside the first, at least one more while the command was silent (keepaliveMs is 100 here).
    expect(messages.split(": keepalive\n\n").length - 1).toBeGreaterThanOrEqual(3);
    expect(messages).toContain('"data":"late\\n"');
  });

  it("sends the first keepalive before the command says anything", async () => {
    const server = await startTestServer();
    try {
      const response = await openStream(server.url, "/api/execute/stream", { body: { command: "sleep 2" } });
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toMatch(/^: keepalive\n\n/);
      await reader.cancel();
    } finally {
      await server.close();
    }
  });

  it("streams a process log: running status, output, terminal status with exit code", async () => {
    await call(t.url, "POST", "/api/process/start", { command: "echo hello; exit 3", processId: "log-1" });
    const events = await collectEvents<LogEvent>(await openStream(t.url, "/api/process/log-1/stream"));
    expect(events[0]).toMatchObject({ type: "status", status: "running", processId: "log-1", seq: 1 });
    expect(events[1]).toMatchObject({ type: "stdout", data: "hello\n", offset: 0, seq: 2 });
    expect(events.at(-2)).toMatchObject({ type: "status", status: "failed", exitCode: 3, seq: 3 });
    // Then how it ended once more as `exit` (what Cloudflare's Sandbox SDK waits for), outside the log.
    expect(events.at(-1)).toEqual({ type: "exit", processId: "log-1", status: "failed", exitCode: 3, timestamp: expect.any(String) });
    expect(events).toHaveLength(4);
  });
});

describe("resuming a stream", () => {
  const command = "for i in $(seq 1 40); do echo line$i; sleep 0.005; done";
  const expected = Array.from({ length: 40 }, (_, i) => `line${i + 1}\n`).join("");

  async function readPart(path: string, headers: Record<string, string>, stopAfter: number): Promise<LogEvent[]> {
    const controller = new AbortController();
    const response = await openStream(t.url, path, { headers, signal: controller.signal });
    const events: LogEvent[] = [];
    const { readEventStream } = await import("../../protocol/sse.ts");
    try {
      for await (const event of readEventStream<LogEvent>(response.body!)) {
        events.push(event);
        if (events.length >= stopAfter) break;
      }
    } catch {
      // aborted
    }
    controller.abort();
    return events;
  }

  it("continues exactly after Last-Event-ID, and after ?since=, with no duplicates or gaps", async () => {
    await call(t.url, "POST", "/api/process/start", { command, processId: "resume-1" });
    const events: LogEvent[] = [];
    let lastId = 0;
    for (let part = 0; part < 50; part++) {
      // Alternate the two ways of resuming.
      const useHeader = part % 2 === 0;
      const path = useHeader || lastId === 0 ? "/api/process/resume-1/stream" : `/api/process/resume-1/stream?since=${lastId}`;
      const headers: Record<string, string> = useHeader && lastId > 0 ? { "last-event-id": String(lastId) } : {};
      const chunk = await readPart(path, headers, 3);
      events.push(...chunk);
      const last = chunk.at(-1);
      if (last?.seq !== undefined) lastId = last.seq;
      if (last?.type === "exit" || (last?.type === "status" && last.status !== "running")) break;
    }
    // The trailing `exit` is not in the log: only the logged events count towards the sequence.
    const logged = events.filter((event) => event.type !== "exit");
    const seqs = logged.map((event) => event.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    const stdout = events.filter((e) => e.type === "stdout").map((e) => (e as { data: string }).data).join("");
    expect(stdout).toBe(expected);
    expect(logged.at(-1)).toMatchObject({ type: "status", status: "completed", exitCode: 0 });
  });

  it("replays nothing when resumed after the last event of a finished process", async () => {
    await call(t.url, "POST", "/api/process/start", { command: "echo x", processId: "resume-end" });
    const all = await collectEvents<LogEvent>(await openStream(t.url, "/api/process/resume-end/stream"));
    const last = all.at(-2)!.seq!;
    const rest = await collectEvents<LogEvent>(await openStream(t.url, "/api/process/resume-end/stream", { headers: { "last-event-id": String(last) } }));
    expect(rest).toEqual([]);
    const fromOne = await collectEvents<LogEvent>(await openStream(t.url, "/api/process/resume-end/stream?since=1"));
    expect(fromOne.map((e) => e.seq)).toEqual(all.slice(1).map((e) => e.seq));
  });
});

describe("output integrity", () => {
  it("never splits a multi-byte character across events; offsets count bytes", async () => {
    const command = "printf 'a\\xf0\\x9f'; sleep 0.2; printf '\\x98\\x80b'; sleep 0.2; printf '\\xe2\\x82'; sleep 0.1; printf '\\xac'";
    const events = await collectEvents<ExecEvent>(await execStream({ command }));
    const output = events.filter((e): e is Output => e.type === "stdout");
    for (const event of output) expect(event.data).not.toContain("\uFFFD");
    expect(output.map((e) => e.data).join("")).toBe("a😀b€");
    expect(output.map((e) => [e.data, e.offset])).toEqual([["a", 0], ["😀b", 1], ["€", 6]]);
  });

  it("streams binary output as base64 with byte offsets", async () => {
    const events = await collectEvents<ExecEvent>(await execStream({ command: "printf '\\x00\\xff'; sleep 0.05; printf '\\xf0\\x9f'", encoding: "base64" }));
    const output = events.filter((e): e is Output => e.type === "stdout");
    expect(output.every((e) => e.encoding === "base64")).toBe(true);
    const bytes = Buffer.concat(output.map((e) => Buffer.from(e.data, "base64")));
    expect(bytes).toEqual(Buffer.from([0, 0xff, 0xf0, 0x9f]));
    let offset = 0;
    for (const event of output) {
      expect(event.offset).toBe(offset);
      offset += Buffer.from(event.data, "base64").length;
    }
  });

  it("streams `seq 1 200000` fifty times with every line arriving", async () => {
    const expected = Array.from({ length: 200_000 }, (_, i) => `${i + 1}\n`).join("");
    const runOnce = async () => {
      const events = await collectEvents<ExecEvent>(await execStream({ command: "seq 1 200000" }));
      let offset = 0;
      let text = "";
      for (const event of events) {
        if (event.type !== "stdout") continue;
        expect(event.offset).toBe(offset);
        offset += Buffer.byteLength(event.data);
        text += event.data;
      }
      expect(events.at(-1)).toMatchObject({ type: "complete", exitCode: 0 });
      return text;
    };
    for (let round = 0; round < 10; round++) {
      const texts = await Promise.all(Array.from({ length: 5 }, runOnce));
      for (const text of texts) {
        expect(text.length).toBe(expected.length);
        expect(text === expected).toBe(true);
      }
    }
  }, 60_000);
});

describe("readers going away", () => {
  it("never kills the process when a stream reader disconnects", async () => {
    const marker = join(t.workspace, "survived");
    const controller = new AbortController();
    const response = await execStream({ command: `sleep 0.3; touch ${marker}`, processId: "survivor" }, controller.signal);
    const reader = response.body!.getReader();
    await reader.read(); // the start event
    controller.abort();
    expect(await eventually(() => existsSync(marker), 3000)).toBe(true);
  });

  it("kills on disconnect when asked (killOnDisconnect)", async () => {
    const marker = join(t.workspace, "should-not-exist");
    const controller = new AbortController();
    const response = await execStream({ command: `sleep 100 & sleep 0.5; touch ${marker}`, killOnDisconnect: true }, controller.signal);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const pid = Number(/"pid":(\d+)/.exec(first)![1]);
    expect(groupMembers(pid).length).toBeGreaterThan(0);
    controller.abort();
    expect(await eventually(() => groupMembers(pid).length === 0, 3000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(existsSync(marker)).toBe(false);
  });

  it("keeps a background process running when its log reader disconnects", async () => {
    await call(t.url, "POST", "/api/process/start", { command: "sleep 0.2; echo later", processId: "bg-reader" });
    const controller = new AbortController();
    const response = await openStream(t.url, "/api/process/bg-reader/stream", { signal: controller.signal });
    await response.body!.getReader().read();
    controller.abort();
    expect(
      await eventually(async () => (await call(t.url, "GET", "/api/process/bg-reader")).body.process.status === "completed"),
    ).toBe(true);
    const messages = await collectMessages(await openStream(t.url, "/api/process/bg-reader/stream"));
    expect(messages.map((m) => m.event)).toEqual(["status", "stdout", "status", "exit"]);
  });
});
