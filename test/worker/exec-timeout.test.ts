/**
 * A command past its time limit fails with ExecutionTimeoutError (EXECUTION_TIMEOUT) carrying its
 * result so far, the same through getSandbox (Workers RPC) and raw /v1; streams end
 * with an `error` event of that code; background processes still end as a record (killed, timedOut).
 */
import { describe, expect, it } from "vitest";
import type { ExecEvent } from "../../protocol/events.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { ExecutionTimeoutError, SandboxError } from "../../src/client/index.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { apiCall, brokenRpcSandbox, collect, eventually, freshSandbox, uniqueId } from "./helpers.ts";

/**
 * Sleeps past any short time limit, told apart by its own length from every other sleep on the
 * machine: sandboxes without isolation see the host's processes, other test runs' among them.
 */
const SLEEP = `sleep 30.${String(Math.random()).slice(2, 8)}`;
/** Writes to both streams, then sleeps. */
const SLOW = `echo so far; echo warned >&2; ${SLEEP}`;

async function rejection(call: Promise<unknown>): Promise<ExecutionTimeoutError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ExecutionTimeoutError);
  return error as ExecutionTimeoutError;
}

/** The partial result every exec timeout carries, whichever way it came. */
function expectPartialResult(error: ExecutionTimeoutError, command = SLOW) {
  expect(error).toBeInstanceOf(SandboxError);
  expect(error).toMatchObject({ name: "ExecutionTimeoutError", code: "EXECUTION_TIMEOUT", httpStatus: 422 });
  expect(error.stdout).toBe("so far\n");
  expect(error.stderr).toBe("warned\n");
  expect(error.exitCode).toBe(124);
  expect(error.signal).toBe("SIGTERM");
  expect(error.command).toBe(command);
  expect(error.duration).toBeGreaterThanOrEqual(200);
  expect(error.duration).toBeLessThan(10_000);
  expect(error.processId).toEqual(expect.any(String));
  expect(error.result).toMatchObject({ success: false, timedOut: true, killed: true });
}

async function notRunning(sandbox: SandboxClient, processId: string): Promise<boolean> {
  return eventually(async () => {
    const process = await sandbox.getProcess(processId);
    return process === null || !["starting", "running"].includes(process.status);
  }, 10_000);
}

describe("exec past its timeout, through getSandbox", () => {
  const sandbox = freshSandbox("exec-timeout");

  it("rejects with ExecutionTimeoutError carrying the output so far, and leaves nothing running", async () => {
    const errors: Error[] = [];
    const error = await rejection(sandbox.exec(SLOW, { timeout: 300, processId: "buffered-timeout", onError: (e) => errors.push(e) }));
    expectPartialResult(error);
    expect(error.message).toContain("300 ms");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ExecutionTimeoutError);
    expect(await notRunning(sandbox, "buffered-timeout")).toBe(true);
    expect((await sandbox.exec(`pgrep -fx '${SLEEP}' || echo none`)).stdout).toBe("none\n");
  });

  it("carries megabytes of output so far across RPC", async () => {
    const bytes = 3 * 1024 * 1024;
    const error = await rejection(sandbox.exec(`head -c ${bytes} /dev/zero | tr '\\0' a; sleep 30`, { timeout: 1_500 }));
    expect(error.stdout?.length).toBe(bytes);
    expect(error.stdout?.startsWith("aaaa")).toBe(true);
  });

  it("in a session too, which stays usable", async () => {
    const session = await sandbox.createSession({ id: "timeouts" });
    await session.exec("export KEPT=yes");
    const error = await rejection(session.exec(SLOW, { timeout: 300 }));
    expectPartialResult(error);
    expect(error.result?.sessionId).toBe("timeouts");
    expect((await session.exec('echo "$KEPT"')).stdout).toBe("yes\n");
  });

  it("streamed with onOutput: the output came, then the same error", async () => {
    const seen: string[] = [];
    const error = await rejection(sandbox.exec(SLOW, { timeout: 300, onOutput: (_stream, data) => seen.push(data) }));
    expectPartialResult(error);
    expect(seen.join("")).toContain("so far\n");
  });

  it("execStream ends with an error event of that code and the result (its output came as events)", async () => {
    const events = await collect(sandbox.execStream(SLOW, { timeout: 300 }));
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: "error", code: "EXECUTION_TIMEOUT", result: { exitCode: 124, timedOut: true, stdout: "" } });
    expect(events.some((event) => event.type === "complete")).toBe(false);
    expect(events.filter((event) => event.type === "stdout").map((event) => (event as { data: string }).data).join("")).toBe("so far\n");
  });

  it("a run's handle: its result rejects with the output read", async () => {
    const handle = await sandbox.run(SLOW, { timeout: 300, wait: false });
    expectPartialResult(await rejection(handle.result));
  });

  it("a broken exec stream resumes to the same end", async () => {
    const resumes: string[] = [];
    const broken = brokenRpcSandbox("exec-timeout-resume", "execStream", 150, resumes);
    const error = await rejection(broken.exec(SLOW, { timeout: 500, stream: true }));
    expectPartialResult(error);
    expect(resumes.length).toBeGreaterThan(0);
  });

  it("a background process is no exec: it ends killed and timed out, and waitForExit gives that record", async () => {
    const process = await sandbox.startProcess("sleep 30", { timeout: 300 });
    expect(await process.waitForExit(10_000)).toMatchObject({ status: "killed", exitCode: 124, timedOut: true });
    expect(await sandbox.getProcess(process.id)).toMatchObject({ status: "killed", exitCode: 124 });
  });
});

describe("exec past its timeout, over /v1 (the HTTP client's case is in http-client.test.ts)", () => {
  const id = uniqueId("exec-timeout-http");

  it("POST /v1/sandboxes/:id/exec answers 422 EXECUTION_TIMEOUT with the result in the error body", async () => {
    const response = await apiCall(`/v1/sandboxes/${id}/exec`, { method: "POST", json: { command: SLOW, timeout: 300 } });
    expect(response.status).toBe(422);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      success: false,
      code: "EXECUTION_TIMEOUT",
      httpStatus: 422,
      context: { success: false, exitCode: 124, timedOut: true, killed: true, signal: "SIGTERM", stdout: "so far\n", stderr: "warned\n", command: SLOW },
    });
  });

  it("the /v1 exec stream ends with the error event", async () => {
    const response = await apiCall(`/v1/sandboxes/${id}/exec/stream`, { method: "POST", json: { command: SLOW, timeout: 300 } });
    expect(response.status).toBe(200);
    const events: ExecEvent[] = [];
    for await (const event of readEventStream<ExecEvent>(response.body!)) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "error", code: "EXECUTION_TIMEOUT", result: { exitCode: 124, timedOut: true } });
  });
});
