/** exec and execStream through getSandbox → Durable Object → local runtime → container server. */
import { describe, expect, it } from "vitest";
import type { ExecEvent } from "../../protocol/events.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { isExecResult } from "../../src/client/guards.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { ExecutionTimeoutError } from "../../src/client/index.ts";
import { brokenRpcSandbox, collect, countedLines, countingCommand, eventIds, eventually, freshSandbox, stdoutOf } from "./helpers.ts";

/** An exec's record leaves the process table when it ends; "gone or finished" means not running. */
async function stopsRunning(sandbox: SandboxClient, processId: string): Promise<boolean> {
  return eventually(async () => {
    const process = await sandbox.getProcess(processId);
    return process === null || !["starting", "running"].includes(process.status);
  }, 10_000);
}

describe("exec", () => {
  const sandbox = freshSandbox("exec");

  it("returns the buffered result, with env, cwd and stdin", async () => {
    const result = await sandbox.exec('mkdir -p sub && cd sub && echo "$GREETING" && cat && echo oops >&2; exit 3', {
      env: { GREETING: "hi there" },
      stdin: "from stdin\n",
    });
    expect(isExecResult(result)).toBe(true);
    expect(result).toMatchObject({ success: false, exitCode: 3, stdout: "hi there\nfrom stdin\n", stderr: "oops\n" });
    const inSub = await sandbox.exec("pwd", { cwd: "sub" });
    expect(inSub.stdout.trim()).toMatch(/\/workspace\/sub$/);
  });

  it("passes sessionId through: cd and export persist within a session", async () => {
    await sandbox.exec("mkdir -p place && cd place && export MARK=kept", { sessionId: "s1" });
    const next = await sandbox.exec('basename "$PWD"; echo "${MARK:-none}"', { sessionId: "s1" });
    expect(next.stdout).toBe("place\nkept\n");
    expect((await sandbox.exec('echo "${MARK:-none}"')).stdout).toBe("none\n");
  });

  it("rejects a timed-out command with ExecutionTimeoutError carrying its result (exec-timeout.test.ts has the rest)", async () => {
    const error = await sandbox.exec("sleep 10", { timeout: 200 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ExecutionTimeoutError);
    expect((error as ExecutionTimeoutError).result).toMatchObject({ success: false, timedOut: true, exitCode: 124 });
    expect((error as ExecutionTimeoutError).duration).toBeLessThan(5_000);
  });

  it("feeds onOutput as output arrives and onComplete at the end", async () => {
    const seen: string[] = [];
    let completed: unknown;
    const result = await sandbox.exec("printf 'a\\n'; printf 'b\\n' >&2; printf 'c'", {
      stream: true,
      onOutput: (stream, data) => seen.push(`${stream}:${data}`),
      onComplete: (r) => (completed = r),
    });
    expect(seen.join("")).toContain("stdout:a\n");
    expect(seen).toContain("stderr:b\n");
    expect(result).toMatchObject({ success: true, exitCode: 0, stdout: "a\nc", stderr: "b\n" });
    expect(completed).toEqual(result);
  });

  it("aborts: kills the command and rejects with the signal's reason", async () => {
    const controller = new AbortController();
    const outputs: string[] = [];
    // The sleep outlasts the test: only the abort can end the call.
    const running = sandbox.exec("echo ready; sleep 1000; echo never", {
      signal: controller.signal,
      onOutput: (_stream, data) => {
        outputs.push(data);
        controller.abort(new Error("stop it"));
      },
    });
    await expect(running).rejects.toThrow("stop it");
    // The command is gone, not left running in the container.
    expect(await eventually(async () => !(await sandbox.listProcesses()).some((p) => p.command.includes("sleep 30")), 10_000)).toBe(true);
    expect(outputs).toEqual(["ready\n"]);
  });

  it("gives one answer for success: a command asked to stop that exits 0 by itself, streamed or buffered", async () => {
    const command = "trap 'exit 0' TERM; echo ready; sleep 30 & wait";
    // The container's answer: the result in the complete event, which execStream passes on as it came.
    let complete: Extract<ExecEvent, { type: "complete" }> | undefined;
    for await (const event of sandbox.execStream(command, { processId: "trap-events" })) {
      if (event.type === "stdout") await sandbox.killProcess("trap-events");
      if (event.type === "complete") complete = event;
    }
    expect(complete?.result).toMatchObject({ exitCode: 0, killed: true });
    // The client's answers: exec over the event stream, and the buffered exec.
    const streamed = await sandbox.exec(command, { processId: "trap-streamed", onOutput: () => void sandbox.killProcess("trap-streamed") });
    const buffered = sandbox.exec(command, { processId: "trap-buffered" });
    const ready = async () => (await sandbox.getProcessLogs("trap-buffered").catch(() => ({ stdout: "" }))).stdout.includes("ready");
    expect(await eventually(ready, 10_000)).toBe(true);
    await sandbox.killProcess("trap-buffered");
    for (const result of [streamed, await buffered]) {
      expect(result).toMatchObject({ exitCode: 0, killed: true, success: complete!.result.success });
    }
  });

  it("calls onError and rejects when the command cannot be run", async () => {
    let reported: Error | undefined;
    await expect(sandbox.exec("true", { cwd: "/definitely/not/here", onError: (e) => (reported = e) })).rejects.toMatchObject({
      code: expect.stringMatching(/SPAWN_FAILED|NOT_FOUND|INVALID_REQUEST|FILE_NOT_FOUND|NOT_A_DIRECTORY/),
    });
    expect(reported).toBeInstanceOf(Error);
  });
});

describe("buffered output larger than Workers RPC carries", () => {
  const sandbox = freshSandbox("big-output");

  it("comes back cut at the cap with truncation flags, never lost to an RPC failure", async () => {
    // 20 MB on each stream, led by a character outside Latin-1 (a string RPC must carry as UTF-16).
    const result = await sandbox.exec("printf '€'; head -c 20000000 /dev/zero | tr '\\0' a; printf '€' >&2; head -c 20000000 /dev/zero | tr '\\0' b >&2");
    expect(result).toMatchObject({ success: true, exitCode: 0, stdoutTruncated: true, stderrTruncated: true });
    expect(result.stdout.startsWith("€aaa")).toBe(true);
    expect(result.stderr.startsWith("€bbb")).toBe(true);
    expect(new TextEncoder().encode(result.stdout).length).toBeLessThanOrEqual(LIMITS.maxExecOutputBytes);
    expect(new TextEncoder().encode(result.stdout).length).toBeGreaterThan(LIMITS.maxExecOutputBytes - 4);
  });

  it("refuses a cap beyond it at once, pointing to streaming", async () => {
    const error = await sandbox.exec("echo never", { maxOutputBytes: LIMITS.maxExecOutputBytes + 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("execStream") });
  });
});

describe("execStream", () => {
  const sandbox = freshSandbox("stream");

  it("yields start, output and complete events in order", async () => {
    const events = await collect(sandbox.execStream("echo one; echo two >&2; exit 4"));
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("start");
    expect(types.at(-1)).toBe("complete");
    const complete = events.at(-1) as Extract<ExecEvent, { type: "complete" }>;
    expect(complete.exitCode).toBe(4);
    const text = events.flatMap((e) => (e.type === "stdout" || e.type === "stderr" ? [`${e.type}:${e.data}`] : []));
    expect(text).toEqual(["stdout:one\n", "stderr:two\n"]);
    const seqs = events.map((e) => e.seq).filter((s) => s !== undefined);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
  });

  it("resumes a stream broken over Workers RPC from its last event id, without gaps or duplicates (a signal does not make the break kill it)", async () => {
    const resumes: string[] = [];
    const broken = brokenRpcSandbox("rpc-resume-exec", "execStream", 300, resumes);
    const events = await collect(broken.execStream(`${countingCommand(40)}; exit 3`, { signal: new AbortController().signal }));
    expect(stdoutOf(events)).toBe(countedLines(40));
    const ids = eventIds(events);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: "complete", exitCode: 3, result: { exitCode: 3, success: false } });
    expect(resumes).toHaveLength(1);
    expect(resumes[0]).toMatch(/^resumeExecStream \d+$/);
    await broken.destroy();
  });

  it("stops cleanly on break; the command runs on unless killOnDisconnect", async () => {
    for await (const event of sandbox.execStream("echo first; sleep 0.5; echo second > after.txt", { processId: "runs-on" })) {
      if (event.type === "stdout") break;
    }
    const process = await sandbox.getProcess("runs-on");
    expect(process?.status).toBe("running");
    expect(await stopsRunning(sandbox, "runs-on")).toBe(true);
    expect((await sandbox.exec("cat after.txt")).stdout).toBe("second\n");

    for await (const event of sandbox.execStream("echo first; sleep 30", { processId: "killed-on-break", killOnDisconnect: true })) {
      if (event.type === "stdout") break;
    }
    expect(await stopsRunning(sandbox, "killed-on-break")).toBe(true);
  });

  it("an AbortSignal ends the iteration and kills the command", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of sandbox.execStream("echo tick; sleep 30", { signal: controller.signal, processId: "aborted" })) {
          seen.push(event.type);
          if (event.type === "stdout") controller.abort(new Error("enough"));
        }
      })(),
    ).rejects.toThrow("enough");
    expect(seen).toEqual(["start", "stdout"]);
    expect(await stopsRunning(sandbox, "aborted")).toBe(true);
  });
});
