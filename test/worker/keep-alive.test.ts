/**
 * Work keeps a sandbox awake: a running process, a code cell or a live terminal, with nobody calling
 * and no stream open, holds the container up past sleepAfter, and once the work ends it sleeps
 * sleepAfter later. A process started with `keepAlive: false` does not; a sandbox with `keepAlive`
 * stays awake with nothing running; `maxIdle` and `maxLifetime` bound what work can hold; getInfo() says why the sandbox is awake and when it will sleep. The
 * container is watched at the runtime, never through the sandbox (a call would be activity).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import { eventually, runtimeState, uniqueId } from "./helpers.ts";

const running = async (id: string) => (await runtimeState(id)).running;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("work keeps a sandbox awake", () => {
  it("a running process holds it past sleepAfter; when the process ends, it sleeps", async () => {
    const id = uniqueId("busy");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s" });
    await sandbox.exec("rm -f done");
    await sandbox.startProcess("sleep 5; touch done");
    // Three times sleepAfter with nobody calling: still up.
    await pause(3_000);
    expect(await running(id)).toBe(true);
    // The process ends at about 5 s: the sandbox sleeps after it.
    expect(await eventually(async () => !(await running(id)), 20_000, 200)).toBe(true);
    expect((await sandbox.exec("ls done")).exitCode).toBe(0);
    await sandbox.destroy();
  });

  it("a live terminal and a running code cell hold it too", async () => {
    const id = uniqueId("busy-terminal");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s" });
    const terminal = await sandbox.createTerminal({ command: "sleep 30" });
    await pause(3_000);
    expect(await running(id)).toBe(true);
    await terminal.kill("SIGKILL");
    expect(await eventually(async () => !(await running(id)), 15_000, 200)).toBe(true);

    const cell = sandbox.runCode("await new Promise((resolve) => setTimeout(resolve, 4000)); 42", { language: "javascript" });
    await pause(3_000);
    expect(await running(id)).toBe(true);
    expect((await cell).results[0]).toMatchObject({ text: "42" });
    await sandbox.destroy();
  });

  it("a process started with keepAlive: false does not", async () => {
    const id = uniqueId("not-busy");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s" });
    await sandbox.startProcess("sleep 30", { keepAlive: false });
    expect(await eventually(async () => !(await running(id)), 15_000, 200)).toBe(true);
    await sandbox.destroy();
  });

  it("getInfo says why it is awake and when it will sleep", async () => {
    const id = uniqueId("why-awake");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "10m", maxIdle: "2h" });
    const idle = await sandbox.getInfo();
    expect(idle.keepAlive).toMatchObject({ reasons: [], why: "idle", sleepAfter: "10m", maxIdle: "2h", maxLifetime: null });
    const lastActivity = Date.parse(idle.keepAlive.lastActivityAt);
    // Idle: sleepAfter after the later of the last call and the container's last request (this one's own calls).
    expect(Date.parse(idle.keepAlive.sleepsAt!) - lastActivity).toBeGreaterThanOrEqual(10 * 60 * 1000);
    expect(Date.parse(idle.keepAlive.sleepsAt!) - lastActivity).toBeLessThan(10 * 60 * 1000 + 5_000);

    const process = await sandbox.startProcess("sleep 30");
    const busy = await sandbox.getInfo();
    expect(busy.keepAlive.reasons).toEqual([{ kind: "processes", count: 1 }]);
    expect(busy.keepAlive.why).toBe("maxIdle");
    expect(Date.parse(busy.keepAlive.sleepsAt!) - Date.parse(busy.keepAlive.lastActivityAt)).toBe(2 * 60 * 60 * 1000);
    await process.kill("SIGKILL");

    await sandbox.configure({ maxLifetime: "30m" });
    const bounded = await sandbox.getInfo();
    expect(bounded.keepAlive).toMatchObject({ maxLifetime: "30m", why: "idle" });
    await sandbox.startProcess("sleep 30");
    const capped = await sandbox.getInfo();
    expect(capped.keepAlive.why).toBe("maxLifetime");
    expect(Date.parse(capped.keepAlive.sleepsAt!)).toBeLessThanOrEqual(Date.parse(capped.containerStartedAt) + 30 * 60 * 1000 + 1_000);
    await sandbox.destroy();
  });
});

describe("ceilings", () => {
  it("maxIdle: work with nobody calling holds it only so long", async () => {
    const id = uniqueId("max-idle");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s", maxIdle: "3s" });
    await sandbox.startProcess("sleep 60");
    const started = Date.now();
    expect(await eventually(async () => !(await running(id)), 20_000, 200)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
    await sandbox.destroy();
  });

  it("maxLifetime: a container sleeps then even while a stream is open", async () => {
    const id = uniqueId("max-lifetime");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "10m", maxLifetime: "3s" });
    const process = await sandbox.startProcess("while true; do echo tick; sleep 0.3; done");
    const events: { type: string }[] = [];
    const following = (async () => {
      for await (const event of process.streamLogs({ signal: AbortSignal.timeout(20_000) })) events.push(event);
    })();
    // The container stops under the open stream, which ends saying so (not by the 20 s timeout).
    await expect(following).rejects.toMatchObject({ code: "CONTAINER_UNAVAILABLE" });
    expect(await eventually(async () => !(await running(id)), 10_000, 200)).toBe(true);
    expect(events.some((event) => event.type === "stdout")).toBe(true);
    await sandbox.destroy();
  });

  it("keepAlive: with nothing running it stays past sleepAfter and maxIdle's default; turned off, it sleeps", async () => {
    const id = uniqueId("keep-alive");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s", keepAlive: true });
    const info = await sandbox.getInfo();
    expect(info.keepAlive).toMatchObject({ reasons: [], keepAlive: true, maxIdle: null, sleepsAt: null, why: null });
    await pause(3_500);
    expect(await running(id)).toBe(true);
    await sandbox.configure({ keepAlive: false });
    expect(await eventually(async () => !(await running(id)), 15_000, 200)).toBe(true);
    await sandbox.destroy();
  });

  it("keepAlive: a ceiling set beside it still holds", async () => {
    const id = uniqueId("keep-alive-capped");
    const sandbox = getSandbox(env.Sandbox, id, { sleepAfter: "1s", keepAlive: true, maxIdle: "3s" });
    const info = await sandbox.getInfo();
    expect(info.keepAlive).toMatchObject({ keepAlive: true, maxIdle: "3s", why: "maxIdle" });
    expect(await eventually(async () => !(await running(id)), 20_000, 200)).toBe(true);
    await sandbox.destroy();
  });

  it("refuses malformed ceilings", async () => {
    const sandbox = getSandbox(env.Sandbox, uniqueId("bad-ceiling"));
    await expect(sandbox.configure({ maxIdle: "forever" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.configure({ maxLifetime: "8d" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.configure({ maxLifetime: 700_000 })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });
});
