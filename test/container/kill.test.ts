/**
 * Timeouts and kills reach a command's whole process tree: exit codes (124, 128+N), signals by name
 * or number, escalation to SIGKILL when SIGTERM is ignored (by grandchildren too), signals that do
 * not kill, kill-all by session, and no survivors or zombies left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, eventually, groupMembers, ownZombies, startTestServer, type TestServer } from "./helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ killGraceMs: 300 });
});
afterAll(() => t.close());

const TREE = "sleep 100 & sleep 100 & wait";

async function startTree(processId: string, command = TREE, options: Record<string, unknown> = {}) {
  const { status, body } = await call(t.url, "POST", "/api/process/start", { command, options: { processId, ...options } });
  expect(status).toBe(200);
  const pid: number = body.process.pid;
  // bash + two sleeps share the group led by bash.
  expect(await eventually(() => groupMembers(pid).length === 3)).toBe(true);
  return pid;
}

describe("timeouts and kills reach the whole process tree", () => {
  it("times out an exec: EXECUTION_TIMEOUT with the result so far (killed, timedOut, exit code 124), no survivors", async () => {
    // The tree sleeps for longer than the test may run: only the timeout can end the call.
    const { status, body } = await call(t.url, "POST", "/api/execute", { command: `echo before; ${TREE}`, timeout: 200 });
    expect(status).toBe(422);
    expect(body).toMatchObject({ success: false, code: "EXECUTION_TIMEOUT", httpStatus: 422, message: expect.stringContaining("200 ms") });
    expect(body.context).toMatchObject({ success: false, exitCode: 124, timedOut: true, killed: true, signal: "SIGTERM", stdout: "before\n" });
    expect(groupMembers(body.context.pid)).toEqual([]);
  });

  it("an exec asked to stop that exits 0 by itself succeeded: killed, exit code 0, success", async () => {
    const running = call(t.url, "POST", "/api/execute", { command: "trap 'exit 0' TERM; echo ready; sleep 100 & wait", processId: "trapped" });
    const logs = async () => (await call(t.url, "GET", "/api/process/trapped/logs")).body.stdout as string | undefined;
    expect(await eventually(async () => (await logs())?.includes("ready") === true)).toBe(true);
    await call(t.url, "DELETE", "/api/process/trapped");
    const { body } = await running;
    expect(body).toMatchObject({ success: true, exitCode: 0, killed: true, signal: "SIGTERM", timedOut: false });
  });

  it("accepts the Cloudflare timeoutMs name too", async () => {
    const { body } = await call(t.url, "POST", "/api/execute", { command: "sleep 10", timeoutMs: 100 });
    expect(body).toMatchObject({ code: "EXECUTION_TIMEOUT", context: { exitCode: 124, timedOut: true } });
  });

  it("kills a background tree with SIGTERM: 128+15, killed, no survivors", async () => {
    const pid = await startTree("tree-term");
    const { status, body } = await call(t.url, "DELETE", "/api/process/tree-term");
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, processId: "tree-term", signal: "SIGTERM", status: "killed" });
    expect(groupMembers(pid)).toEqual([]);
    const record = (await call(t.url, "GET", "/api/process/tree-term")).body.process;
    expect(record).toMatchObject({ status: "killed", exitCode: 143, killed: true, signal: "SIGTERM" });
  });

  it("takes the signal by number or short name", async () => {
    const pid = await startTree("tree-int");
    const { body } = await call(t.url, "DELETE", "/api/process/tree-int?signal=INT");
    expect(body.signal).toBe("SIGINT");
    expect(await eventually(() => groupMembers(pid).length === 0)).toBe(true);

    const pid9 = await startTree("tree-9");
    const killed = await call(t.url, "DELETE", "/api/process/tree-9?signal=9");
    expect(killed.body).toMatchObject({ signal: "SIGKILL", status: "killed" });
    expect((await call(t.url, "GET", "/api/process/tree-9")).body.process.exitCode).toBe(137);
    expect(groupMembers(pid9)).toEqual([]);
  });

  it("escalates to SIGKILL after the grace period when SIGTERM is ignored, even by grandchildren", async () => {
    // The grandchild ignores TERM and outlives its parent.
    const command = "trap '' TERM; (trap '' TERM; sleep 100) & trap 'exit 0' TERM; sleep 100 & wait";
    const { body } = await call(t.url, "POST", "/api/process/start", { command, processId: "stubborn" });
    const pid: number = body.process.pid;
    expect(await eventually(() => groupMembers(pid).length >= 3)).toBe(true);
    const killed = await call(t.url, "DELETE", "/api/process/stubborn");
    expect(killed.body.status).toBe("killed");
    // Only SIGKILL ends them: each ignores SIGTERM and sleeps for longer than the test may run.
    expect(await eventually(() => groupMembers(pid).length === 0, 20_000)).toBe(true);
  });

  it("delivers non-terminating signals without killing", async () => {
    const command = "trap 'echo got-usr1' USR1; echo ready; while true; do sleep 0.05; done";
    const { body } = await call(t.url, "POST", "/api/process/start", { command, processId: "usr1" });
    const pid: number = body.process.pid;
    const logs = async () => (await call(t.url, "GET", "/api/process/usr1/logs")).body.stdout as string;
    expect(await eventually(async () => (await logs()).includes("ready"))).toBe(true); // the trap is set
    const reply = await call(t.url, "DELETE", "/api/process/usr1?signal=SIGUSR1");
    expect(reply.body.status).toBe("running");
    expect(await eventually(async () => (await logs()).includes("got-usr1"))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500)); // past the grace period: still alive
    expect((await call(t.url, "GET", "/api/process/usr1")).body.process.status).toBe("running");
    await call(t.url, "DELETE", "/api/process/usr1?signal=KILL");
    expect(groupMembers(pid)).toEqual([]);
  });

  it("is idempotent on a finished process", async () => {
    await call(t.url, "POST", "/api/process/start", { command: "true", processId: "done-already" });
    await eventually(async () => (await call(t.url, "GET", "/api/process/done-already")).body.process.status === "completed");
    const { status, body } = await call(t.url, "DELETE", "/api/process/done-already");
    expect(status).toBe(200);
    expect(body.status).toBe("completed");
  });

  it("kill-all reaches every live process, optionally one session's", async () => {
    const a = await startTree("ka-1", TREE, { sessionId: "s1" });
    const b = await startTree("ka-2", TREE, { sessionId: "s2" });
    const c = await startTree("ka-3", TREE, { sessionId: "s1" });
    const s1 = await call(t.url, "DELETE", "/api/process/kill-all?sessionId=s1");
    expect(s1.body).toMatchObject({ success: true, killed: 2 });
    // Orphaned grandchildren are reaped by init a moment after they die: poll rather than race it.
    expect(await eventually(() => groupMembers(a).length === 0 && groupMembers(c).length === 0)).toBe(true);
    expect(groupMembers(b).length).toBe(3);
    const rest = await call(t.url, "DELETE", "/api/process/kill-all");
    expect(rest.body.killed).toBe(1);
    expect(await eventually(() => groupMembers(b).length === 0)).toBe(true);
  });

  it("kills the tree when a background process times out", async () => {
    const { body } = await call(t.url, "POST", "/api/process/start", { command: TREE, processId: "bg-timeout", timeoutMs: 150 });
    const pid: number = body.process.pid;
    expect(
      await eventually(async () => (await call(t.url, "GET", "/api/process/bg-timeout")).body.process.status === "killed"),
    ).toBe(true);
    const record = (await call(t.url, "GET", "/api/process/bg-timeout")).body.process;
    expect(record).toMatchObject({ exitCode: 124, timedOut: true, killed: true });
    expect(await eventually(() => groupMembers(pid).length === 0)).toBe(true);
  });

  it("leaves no zombies of its own behind", async () => {
    expect(await eventually(() => ownZombies().length === 0, 1000)).toBe(true);
  });
});
