/**
 * The output log at the heart of every stream: sequence numbers and per-stream byte offsets, memory
 * bounded by bytes and by entry count, readers that fall behind told exactly what they missed,
 * readers starting at byte offsets, and the backpressure pinned readers put on a writer.
 */
import { describe, expect, it } from "vitest";
import { LogReader } from "../../container/engine/log-reader.ts";
import { OutputLog } from "../../container/engine/output-log.ts";

const kb = (n: number, fill = 0x61) => Buffer.alloc(n * 1024, fill);

describe("OutputLog", () => {
  it("numbers entries from 1 and tracks per-stream offsets", () => {
    const log = new OutputLog(1 << 20);
    log.appendStatus({ status: "running", pid: 1 });
    const a = log.appendOutput("stdout", Buffer.from("abc"));
    const b = log.appendOutput("stderr", Buffer.from("xy"));
    const c = log.appendOutput("stdout", Buffer.from("d"));
    expect([a.seq, b.seq, c.seq]).toEqual([2, 3, 4]);
    expect([a.offset, b.offset, c.offset]).toEqual([0, 0, 3]);
    expect(log.streamBytes("stdout")).toBe(4);
  });

  it("keeps memory bounded and counts what it dropped", () => {
    const log = new OutputLog(64 * 1024);
    for (let i = 0; i < 1000; i++) log.appendOutput("stdout", kb(4));
    const retained = log.retainedOutput("stdout").reduce((n, b) => n + b.length, 0);
    expect(retained).toBeLessThanOrEqual(64 * 1024);
    expect(log.droppedBytes("stdout") + retained).toBe(1000 * 4 * 1024);
    const reader = new LogReader(log, 0);
    const [notice, ...entries] = reader.take(Infinity);
    expect(notice).toMatchObject({ kind: "truncated", droppedEvents: log.droppedEvents, droppedBytes: log.droppedBytes("stdout") });
    expect((entries[0] as { seq: number }).seq).toBe(log.droppedEvents + 1);
  });

  it("bounds many tiny entries too, by count", () => {
    const log = new OutputLog(64 * 1024);
    for (let i = 0; i < 100_000; i++) log.appendOutput("stdout", Buffer.from("x"));
    expect(log.retainedEntries).toBe(log.maxEntries);
    expect(log.maxEntries).toBeLessThan(5000);
    expect(new LogReader(log, 0).take(Infinity).length).toBe(log.maxEntries + 1); // and the notice
  });

  it("keeps retentionBytes of output however small the chunks, within twice that in memory", () => {
    const retention = 1024 * 1024;
    const log = new OutputLog(retention);
    // Short lines alternating between the streams: one entry each.
    for (let i = 0; i < 40_000; i++) log.appendOutput(i % 2 ? "stderr" : "stdout", Buffer.from(`line ${String(i).padStart(88, ".")}\n`));
    expect(log.droppedEvents).toBeGreaterThan(0);
    expect(log.retainedBytes).toBeGreaterThan(retention - 100);
    expect(log.retainedBytes).toBeLessThanOrEqual(retention);
    expect(log.footprintBytes).toBeLessThan(2 * retention);
    const retained = log.retainedOutput("stdout").reduce((n, b) => n + b.length, 0) + log.retainedOutput("stderr").reduce((n, b) => n + b.length, 0);
    expect(retained).toBe(log.retainedBytes);
  });

  it("a live reader that falls behind learns the exact bytes it missed", () => {
    const log = new OutputLog(16 * 1024);
    const reader = new LogReader(log, 0);
    log.appendOutput("stdout", kb(1));
    expect(reader.take(Infinity)).toHaveLength(1);
    for (let i = 0; i < 100; i++) log.appendOutput("stdout", kb(1));
    const [notice, ...entries] = reader.take(Infinity);
    const got = entries.reduce((n, e) => n + (e.kind === "output" ? e.data.length : 0), 0);
    expect(notice!.kind).toBe("truncated");
    expect((notice as { droppedBytes: number }).droppedBytes + got).toBe(100 * 1024);
  });

  it("starts a reader at byte offsets, inside an entry when the offset falls in one", () => {
    const log = new OutputLog(1 << 20);
    log.appendStatus({ status: "running", pid: 1 });
    log.appendOutput("stdout", Buffer.from("hello "));
    log.appendOutput("stderr", Buffer.from("oops"));
    log.appendOutput("stdout", Buffer.from("world"));
    const items = new LogReader(log, 1, { from: { stdout: 8, stderr: 4 } }).take(Infinity);
    expect(items).toEqual([expect.objectContaining({ kind: "output", seq: 4, stream: "stdout", offset: 8, data: Buffer.from("rld") })]);
    // Offsets only: the status first, then the output after them.
    const all = new LogReader(log, 0, { from: { stdout: 3 } }).take(Infinity);
    expect(all.map((item) => (item.kind === "output" ? `${item.seq}:${item.data}` : item.kind))).toEqual(["status", "2:lo ", "3:oops", "4:world"]);
  });

  it("gives the truncated notice the last dropped seq, and tells a reader with offsets only what it lacks", () => {
    const log = new OutputLog(4 * 1024);
    for (let i = 0; i < 10; i++) log.appendOutput(i % 2 ? "stderr" : "stdout", kb(1, 0x61 + i));
    const first = log.firstSeq;
    const [notice] = new LogReader(log, 0).take(Infinity);
    expect(notice).toMatchObject({ kind: "truncated", seq: first - 1, droppedEvents: first - 1 });
    const start = log.retainedStart();
    expect(notice).toMatchObject({ stdoutDropped: start.stdout, stderrDropped: start.stderr, droppedBytes: start.stdout + start.stderr });
    // After the notice's id: nothing more to tell.
    expect(new LogReader(log, first - 1).take(Infinity)[0]).toMatchObject({ kind: "output", seq: first });
    // A reader that has every stdout byte up to the retained start only hears about stderr.
    const [partial] = new LogReader(log, 0, { from: { stdout: start.stdout, stderr: 0 } }).take(Infinity);
    expect(partial).toMatchObject({ kind: "truncated", stdoutDropped: 0, stderrDropped: start.stderr });
    // …and one that has both hears nothing.
    expect(new LogReader(log, 0, { from: start }).take(Infinity)[0]).toMatchObject({ kind: "output", seq: first });
  });

  it("a pinned reader holds entries back and signals pressure until it catches up", () => {
    const log = new OutputLog(8 * 1024);
    const pressure: boolean[] = [];
    log.onPressure = (over) => pressure.push(over);
    const reader = new LogReader(log, 0, { pin: true });
    for (let i = 0; i < 20; i++) log.appendOutput("stdout", kb(1));
    expect(pressure).toEqual([true]);
    const entries = reader.take(Infinity);
    expect(entries).toHaveLength(20); // nothing was dropped under the pin
    expect(pressure).toEqual([true, false]);
    reader.unpin();
  });

  it("keeps to a reading window while pinned readers read: little unread, the last few read", () => {
    const log = new OutputLog(64 * 1024);
    const pressure: boolean[] = [];
    log.onPressure = (over) => pressure.push(over);
    const reader = new LogReader(log, 0, { pin: true });
    log.setReading({ unreadBytes: 8 * 1024, sentBytes: 16 * 1024 });
    for (let i = 0; i < 8; i++) log.appendOutput("stdout", kb(1));
    expect(pressure).toEqual([]);
    log.appendOutput("stdout", kb(1));
    expect(pressure).toEqual([true]); // 9 KiB unread: hold the writer back
    reader.take(Infinity);
    expect(pressure).toEqual([true, false]);
    for (let i = 0; i < 30; i++) {
      log.appendOutput("stdout", kb(1));
      reader.take(Infinity);
    }
    // Of the 39 KiB read, the last 16 KiB stay.
    expect(log.retainedBytes).toBe(16 * 1024);
    expect(log.droppedBytes("stdout")).toBe(23 * 1024);
    // Back to the retention: unread output up to 64 KiB waits without pressure, nothing more is dropped.
    log.setReading(undefined);
    for (let i = 0; i < 40; i++) log.appendOutput("stdout", kb(1));
    expect(pressure).toEqual([true, false]);
    expect(log.droppedBytes("stdout")).toBe(23 * 1024);
    reader.unpin();
  });

  it("always keeps the newest entry, so the final status survives", () => {
    const log = new OutputLog(1);
    log.appendOutput("stdout", kb(4));
    log.appendStatus({ status: "completed", exitCode: 0 });
    log.close();
    const items = new LogReader(log, 0).take(Infinity);
    expect(items.at(-1)).toMatchObject({ kind: "status", status: "completed" });
  });

  it("wakes waiting readers on new entries and on close", async () => {
    const log = new OutputLog(1024);
    const reader = new LogReader(log, 0);
    const waiting = reader.wait();
    log.appendOutput("stdout", Buffer.from("x"));
    await waiting;
    expect(reader.take(100)).toHaveLength(1);
    const closing = reader.wait();
    log.close();
    await closing;
    expect(reader.done).toBe(true);
  });
});
