/**
 * The client's resumable stream (src/rpc/resumable-stream.ts, as the HTTP client drives it): every
 * caller outside Workers trusts it to turn a flaky connection into one exact stream of events. Here
 * the real HTTP client reads from a real local server (event-log-server.ts) that drops connections
 * at chosen bytes, and each test checks what a reader must be able to rely on: every output byte
 * exactly once and in order however a connection is cut (at every byte of the stream, in turn), a
 * budget of failed reconnects that ends in SandboxConnectionError, answers and coded stream ends that
 * are final, and an AbortSignal that stops it all with its own reason and no further reconnect.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import { getHttpSandbox } from "../../src/client/http.ts";
import { ProcessNotFoundError, SandboxConnectionError, SandboxError } from "../../src/rpc/errors.ts";
import { startEventLogServer, type EventLogServer, type LogEntry } from "./event-log-server.ts";

const TIMESTAMP = "2026-01-01T00:00:00.000Z";
// Multi-byte characters everywhere, so a cut lands inside characters as often as between them.
const STDOUT = ["hello\n", "π≈3.14159 — 日本語のテキスト\n", '😀 "quoted" and \\ backslashed\n', "end\n"];
const STDERR = ["warn: ünïcödé\n", "done ✓\n"];

type Stream = "stdout" | "stderr";

/** An event log with its output interleaved, offsets in bytes per stream, `data` last as on the wire. */
function outputLog(head: LogEntry, tail: (seq: number) => LogEntry, fields: Record<string, unknown> = {}): LogEntry[] {
  const order: [Stream, string][] = [
    ["stdout", STDOUT[0]!],
    ["stderr", STDERR[0]!],
    ["stdout", STDOUT[1]!],
    ["stdout", STDOUT[2]!],
    ["stderr", STDERR[1]!],
    ["stdout", STDOUT[3]!],
  ];
  const offsets = { stdout: 0, stderr: 0 };
  const log: LogEntry[] = [head];
  for (const [type, data] of order) {
    log.push({ type, timestamp: TIMESTAMP, seq: log.length + 1, ...fields, offset: offsets[type], data });
    offsets[type] += Buffer.byteLength(data);
  }
  log.push(tail(log.length + 1));
  return log;
}

const EXEC_LOG = outputLog({ type: "start", timestamp: TIMESTAMP, seq: 1, command: "demo", processId: "cmd", pid: 42 }, (seq) => ({
  type: "complete",
  timestamp: TIMESTAMP,
  seq,
  exitCode: 0,
  result: { success: true, exitCode: 0, stdout: "", stderr: "", command: "demo", duration: 1, timestamp: TIMESTAMP },
}));

const PROCESS_LOG = outputLog(
  { type: "status", timestamp: TIMESTAMP, seq: 1, processId: "web", status: "running", pid: 42 },
  (seq) => ({ type: "status", timestamp: TIMESTAMP, seq, processId: "web", status: "completed", exitCode: 0 }),
  { processId: "web" },
);

type OutputEvent = { type: Stream; seq?: number; offset: number; data: string };
const isOutputEvent = (event: { type: string }): event is OutputEvent => event.type === "stdout" || event.type === "stderr";

/**
 * The events a reader got are an exact prefix of the log: each stream's output continues at exactly
 * the byte where the last left off (no gap, no byte twice), ids never go back, and an id repeats only
 * for the rest of an output event whose first part came before a break.
 */
function expectExactPrefix(events: readonly { type: string; seq?: number }[]): Record<Stream, string> {
  const text = { stdout: "", stderr: "" };
  let lastSeq = 0;
  let last: { type: string; seq?: number } | undefined;
  for (const event of events) {
    if (isOutputEvent(event)) {
      expect(event.offset, `${event.type} at seq ${event.seq}`).toBe(Buffer.byteLength(text[event.type]));
      text[event.type] += event.data;
    }
    const seq = event.seq ?? lastSeq;
    if (seq === lastSeq && last !== undefined) {
      expect(isOutputEvent(event) && last.type === event.type && last.seq === seq, `seq ${seq} twice`).toBe(true);
    }
    expect(seq).toBeGreaterThanOrEqual(lastSeq);
    lastSeq = seq;
    last = event;
  }
  expect(STDOUT.join("").startsWith(text.stdout)).toBe(true);
  expect(STDERR.join("").startsWith(text.stderr)).toBe(true);
  return text;
}

/** The whole log came: from its first event (once) to its final one (once, last), every byte exact. */
function expectWhole(events: readonly { type: string; seq?: number }[], final: (event: { type: string }) => boolean): void {
  expect(expectExactPrefix(events)).toEqual({ stdout: STDOUT.join(""), stderr: STDERR.join("") });
  expect(events[0]!.seq).toBe(1);
  expect(events.filter((event) => event.seq === 1)).toHaveLength(1);
  expect(events.filter(final)).toHaveLength(1);
  expect(final(events.at(-1)!)).toBe(true);
}

/** Reads an iterable to its end or its error, keeping what came before an error. */
async function readAll<T>(iterable: AsyncIterable<T>, onEvent?: (event: T) => void): Promise<{ events: T[]; error: unknown }> {
  const events: T[] = [];
  try {
    for await (const event of iterable) {
      events.push(event);
      onEvent?.(event);
    }
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

/** The byte just after the frame of the event with this id, in a body from the start. */
function afterFrame(server: EventLogServer, seq: number): number {
  const body = server.bodyFrom({});
  const at = body.indexOf(`id: ${seq}\n`);
  return body.indexOf("\n\n", at) + 2;
}

const isComplete = (event: { type: string }) => event.type === "complete";
const fastRetry = { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 };
/** The tests that cut a stream at every byte in turn make a thousand connections or more. */
const LOOP_TIMEOUT_MS = 180_000;

describe("an exec stream over HTTP that loses its connection", () => {
  let server: EventLogServer;
  beforeAll(async () => {
    server = await startEventLogServer(EXEC_LOG);
  });
  afterAll(() => server.close());
  afterEach(() => server.reset());
  const sandbox = () => getHttpSandbox("unit", { url: server.url, token: "t", retry: fastRetry });

  it("yields every byte exactly once, in order, wherever the connection is cut", async () => {
    const length = server.bodyFrom({}).length;
    for (let cut = 1; cut < length; cut++) {
      server.reset();
      server.plan({ cutAfterBytes: cut });
      const { events, error } = await readAll(sandbox().execStream("demo", { processId: "cmd" }));
      expect(error, `cut after ${cut} bytes`).toBeUndefined();
      expectWhole(events, isComplete);
      // One stream, one resume: a break costs one reconnect, never a fresh start.
      expect(server.requests.map((request) => request.method)).toEqual(["POST", "GET"]);
      expect(server.requests[1]!.path).toBe("/v1/sandboxes/unit/exec/cmd/stream");
    }
  }, LOOP_TIMEOUT_MS);

  it("resumes after the last whole event, from the byte after the part of a cut one", async () => {
    // Inside the data of event 4 (stdout's second chunk), in the middle of "日" (three bytes).
    const cut = server.bodyFrom({}).indexOf(Buffer.from("日")) + 1;
    server.plan({ cutAfterBytes: cut });
    const { events, error } = await readAll(sandbox().execStream("demo", { processId: "cmd" }));
    expect(error).toBeUndefined();
    expectWhole(events, isComplete);
    // The part before "日" is handed on at once; the rest comes under the same id, from the next byte.
    const before = "π≈3.14159 — ";
    expect(events.filter((event) => event.seq === 4).map((event) => (event as OutputEvent).data)).toEqual([before, STDOUT[1]!.slice(before.length)]);
    const resumed = server.requests[1]!;
    expect(resumed.lastEventId).toBe("3");
    expect(resumed.query).toMatchObject({
      stdoutOffset: String(Buffer.byteLength(STDOUT[0]! + before)),
      stderrOffset: String(Buffer.byteLength(STDERR[0]!)),
    });
  });

  it("goes on through a connection cut after every few events: each reconnect that works starts the count over", async () => {
    // Each connection carries 150 bytes (past the fields before an event's data): more cuts than the budget of 1.
    server.plan(...Array.from({ length: 12 }, () => ({ cutAfterBytes: 150 })));
    const client = getHttpSandbox("unit", { url: server.url, token: "t", retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 2 } });
    const cutsBefore = server.cuts;
    const { events, error } = await readAll(client.execStream("demo", { processId: "cmd" }));
    expect(error).toBeUndefined();
    expectWhole(events, isComplete);
    expect(server.cuts - cutsBefore).toBeGreaterThan(2);
  });

  it("gives up with SandboxConnectionError after the reconnects of its budget fail in a row", async () => {
    server.plan({ cutAfterBytes: afterFrame(server, 3) }, { reset: true }, { reset: true }, { reset: true });
    const { events, error } = await readAll(sandbox().execStream("demo", { processId: "cmd" }));
    expect(error).toBeInstanceOf(SandboxConnectionError);
    expect((error as SandboxConnectionError).message).toContain("3 reconnects failed");
    expect((error as SandboxConnectionError).context).toMatchObject({ since: 3 });
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3]);
    expectExactPrefix(events);
    expect(server.requests).toHaveLength(4);
    // A stream given up on is not an abort: the command is left running, for attach or reconnect.
    expect(server.kills).toEqual([]);
  });

  it("gives up when the service keeps ending the stream cleanly without a single event", async () => {
    server.plan({ endAfterBytes: afterFrame(server, 3) }, ...Array.from({ length: 4 }, () => ({ endAfterBytes: 0 })));
    const { events, error } = await readAll(sandbox().execStream("demo", { processId: "cmd" }));
    expect(error).toBeInstanceOf(SandboxConnectionError);
    expect((error as Error).message).toContain("ends again and again");
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(server.requests).toHaveLength(5);
  });

  it("passes an answer of the service through at once, without retrying it", async () => {
    server.plan({ cutAfterBytes: afterFrame(server, 2) + 10 }, { status: 404, code: "PROCESS_NOT_FOUND" });
    const { events, error } = await readAll(sandbox().execStream("demo", { processId: "cmd" }));
    expect(error).toBeInstanceOf(ProcessNotFoundError);
    expect(events.map((event) => event.seq)).toEqual([1, 2]);
    expect(server.requests).toHaveLength(2);
  });

  it("raises a stream's coded end (its container stopped) with that code, without reconnecting", async () => {
    server.plan({ streamEndAfterBytes: afterFrame(server, 3), code: "CONTAINER_UNAVAILABLE" });
    const { events, error } = await readAll(sandbox().execStream("demo", { processId: "cmd" }));
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).code).toBe("CONTAINER_UNAVAILABLE");
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(server.requests).toHaveLength(1);
  });

  it("ends with the AbortSignal's reason while a connection is open, kills the command by its id and never reconnects", async () => {
    server.plan({ holdAfterBytes: afterFrame(server, 3) });
    const controller = new AbortController();
    const reason = new Error("the caller stopped reading");
    const { events, error } = await readAll(sandbox().execStream("demo", { processId: "cmd-abort", signal: controller.signal }), (event: ExecEvent) => {
      if (event.seq === 3) controller.abort(reason);
    });
    expect(error).toBe(reason);
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(server.requests).toHaveLength(1);
    expect(server.kills).toEqual(["/v1/sandboxes/unit/processes/cmd-abort?signal=SIGTERM"]);
  });

  it("ends with the AbortSignal's reason while it waits to reconnect, and never reconnects", async () => {
    server.plan({ cutAfterBytes: afterFrame(server, 3) });
    const cutsBefore = server.cuts;
    const controller = new AbortController();
    const reason = new Error("the caller gave up waiting");
    // A backoff far longer than any test: the abort is what ends the wait.
    const client = getHttpSandbox("unit", { url: server.url, token: "t", retry: { attempts: 3, baseDelayMs: 600_000, maxDelayMs: 600_000 } });
    const reading = readAll(client.execStream("demo", { processId: "cmd-wait", signal: controller.signal }));
    await vi.waitFor(() => expect(server.cuts).toBe(cutsBefore + 1));
    controller.abort(reason);
    const { events, error } = await reading;
    expect(error).toBe(reason);
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(server.requests).toHaveLength(1);
    expect(server.kills).toEqual(["/v1/sandboxes/unit/processes/cmd-wait?signal=SIGTERM"]);
  });
});

describe("a process log stream over HTTP that loses its connection", () => {
  let server: EventLogServer;
  beforeAll(async () => {
    server = await startEventLogServer(PROCESS_LOG);
  });
  afterAll(() => server.close());

  const isFinalStatus = (event: { type: string }) => event.type === "status" && (event as LogEvent & { type: "status" }).status === "completed";

  it("resumes to the final status, every byte once, wherever it is cut", async () => {
    const sandbox = getHttpSandbox("unit", { url: server.url, token: "t", retry: fastRetry });
    const length = server.bodyFrom({}).length;
    for (let cut = 1; cut < length; cut += 7) {
      server.reset();
      server.plan({ cutAfterBytes: cut });
      const { events, error } = await readAll(sandbox.streamProcessLogs("web"));
      expect(error, `cut after ${cut} bytes`).toBeUndefined();
      expectWhole(events, isFinalStatus);
      expect(server.requests.map((request) => request.path)).toEqual(["/v1/sandboxes/unit/processes/web/logs/stream", "/v1/sandboxes/unit/processes/web/logs/stream"]);
    }
  }, LOOP_TIMEOUT_MS);

  it("starts after `since`, and resumes from there with Last-Event-ID and the byte after a cut event's part", async () => {
    const sandbox = getHttpSandbox("unit", { url: server.url, token: "t", retry: fastRetry });
    server.reset();
    // In event 5's data (stdout's third chunk), just after "😀 " (five bytes).
    const cut = server.bodyFrom({ since: 4 }).indexOf(Buffer.from("😀 ")) + Buffer.byteLength("😀 ");
    server.plan({ cutAfterBytes: cut });
    const { events, error } = await readAll(sandbox.streamProcessLogs("web", { since: 4 }));
    expect(error).toBeUndefined();
    expect(events[0]).toMatchObject({ seq: 5, offset: Buffer.byteLength(STDOUT[0]! + STDOUT[1]!), data: "😀 " });
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed", exitCode: 0 });
    const output = (stream: Stream) => events.filter((event) => event.type === stream).map((event) => (event as OutputEvent).data).join("");
    expect(output("stdout")).toBe(STDOUT[2]! + STDOUT[3]!);
    expect(output("stderr")).toBe(STDERR[1]!);
    expect(server.requests.map((request) => request.lastEventId)).toEqual(["4", "4"]);
    expect(server.requests[1]!.query.stdoutOffset).toBe(String(Buffer.byteLength(STDOUT[0]! + STDOUT[1]! + "😀 ")));
  });
});
