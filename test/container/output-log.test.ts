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

  it("bounds many tiny entries too", () => {
    const log = new OutputLog(64 * 1024);
    for (let i = 0; i < 100_000; i++) log.appendOutput("stdout", Buffer.from("x"));
    expect(new LogReader(log, 0).take(Infinity).length).toBeLessThan(1000);
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
