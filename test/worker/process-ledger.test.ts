/**
 * Logs that outlive the container: a sandbox sleeps with one process finished and one still
 * running; after the next start, getProcess, getProcessLogs and the log stream of both still say
 * what happened — exit status, the tail of their output (bounded), and events under the seq numbers
 * they had, so a reader resumes with its cursor. An old handle reads them too. destroy() forgets them.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../protocol/events.ts";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import { TAIL_BYTES } from "../../src/sandbox/process-ledger.ts";
import { collect, eventually, runtimeState, uniqueId } from "./helpers.ts";

const asleep = async (id: string) => eventually(async () => !(await runtimeState(id)).running, 20_000, 200);

describe("process logs kept beyond the container", () => {
  it("getProcess, getProcessLogs and the log stream answer after the container slept", async () => {
    const id = uniqueId("kept-logs");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s" });
    const finished = await sandbox.startProcess("for i in 1 2 3; do echo line-$i; done; echo oops >&2; exit 3");
    await finished.waitForExit(10_000);
    const ticking = await sandbox.startProcess("i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.2; done", { keepAlive: false });
    const seen = await collect(ticking.streamLogs(), 4);
    const cursor = seen.at(-1)!.seq!;
    const before = (await sandbox.info()).generation;

    expect(await asleep(id)).toBe(true);

    // The finished one: how it ended, and what it wrote.
    expect(await sandbox.getProcess(finished.id)).toMatchObject({ id: finished.id, status: "failed", exitCode: 3, generation: before });
    expect(await sandbox.getProcessLogs(finished.id)).toMatchObject({ stdout: "line-1\nline-2\nline-3\n", stderr: "oops\n", stdoutDropped: 0 });
    expect((await sandbox.info()).generation).not.toBe(before);
    // Its old handle reads the same.
    expect(await finished.getStatus()).toBe("failed");
    expect((await finished.getLogs()).stdout).toBe("line-1\nline-2\nline-3\n");

    // The one that was running when the container went: killed then, its output kept.
    expect((await sandbox.getProcess(ticking.id))?.status).toBe("killed");
    expect((await sandbox.getProcessLogs(ticking.id)).stdout).toMatch(/^tick-1\ntick-2\n(tick-\d+\n)+$/);
    // Resumed from the cursor a reader had: the events after it, under the seq numbers they had.
    const resumed = await collect(sandbox.streamProcessLogs(ticking.id, { since: cursor }));
    const output = resumed.filter((event): event is Extract<LogEvent, { type: "stdout" | "stderr" }> => event.type === "stdout");
    expect(output[0]!.seq).toBe(cursor + 1);
    expect(output[0]!.data).toBe(`tick-${seen.filter((event) => event.type === "stdout").length + 1}\n`);
    expect(resumed.at(-1)).toMatchObject({ status: "killed" });
    await expect(ticking.kill()).rejects.toMatchObject({ code: "STALE_PROCESS_HANDLE" });
    await sandbox.destroy();
  });

  it("keeps a bounded tail of a long log, and says how much came before it", async () => {
    const id = uniqueId("kept-tail");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s" });
    const loud = await sandbox.startProcess("seq 1 40000");
    await loud.waitForExit(10_000);
    const total = (await sandbox.exec("seq 1 40000 | wc -c")).stdout.trim();
    expect(await asleep(id)).toBe(true);

    const logs = await sandbox.getProcessLogs(loud.id);
    expect(logs.stdout.length).toBeLessThanOrEqual(TAIL_BYTES);
    expect(logs.stdout.length).toBeGreaterThan(TAIL_BYTES / 2);
    expect(logs.stdout.endsWith("39999\n40000\n")).toBe(true);
    expect(logs.stdoutDropped! + logs.stdout.length).toBe(Number(total));
    await sandbox.destroy();
  });

  it("destroy forgets them", async () => {
    const id = uniqueId("kept-destroyed");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s" });
    const done = await sandbox.startProcess("echo bye");
    await done.waitForExit(10_000);
    expect(await asleep(id)).toBe(true);
    expect(await sandbox.getProcess(done.id)).toMatchObject({ status: "completed" });
    await sandbox.destroy();
    expect(await sandbox.getProcess(done.id)).toBeNull();
  });
});
