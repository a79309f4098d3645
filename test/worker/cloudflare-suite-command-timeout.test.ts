/**
 * Cloudflare's command-timeout cases, ported to getSandbox: a command past its `timeout` (per call or
 * the session's `commandTimeoutMs`) makes exec throw a timeout error promptly; the per-call limit wins;
 * a session can be deleted after one of its commands timed out.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { CreateSessionOptions } from "../../src/client/index.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

const timeoutError = { name: "ExecutionTimeoutError", code: "EXECUTION_TIMEOUT", message: expect.stringMatching(/timeout|timed out/i) };

/** Runs `call`, expects it to reject as a timeout, and returns how long it took. */
async function timesOut(call: () => Promise<unknown>): Promise<number> {
  const started = Date.now();
  await expect(call()).rejects.toMatchObject(timeoutError);
  return Date.now() - started;
}

describe("command timeout", () => {
  const sandbox = sandboxes.create("cf-timeout");

  it("sandbox.exec respects a per-command timeout", async () => {
    expect(await timesOut(() => sandbox.exec("sleep 30", { timeout: 1000 }))).toBeLessThan(15_000);
  });

  it("session.exec respects a per-command timeout", async () => {
    const session = await sandbox.createSession();
    expect(await timesOut(() => session.exec("sleep 30", { timeout: 1000 }))).toBeLessThan(15_000);
  });

  it("session.exec respects the session's commandTimeoutMs", async () => {
    const session = await sandbox.createSession({ commandTimeoutMs: 1000 } as CreateSessionOptions);
    expect(await timesOut(() => session.exec("sleep 30"))).toBeLessThan(15_000);
  });

  it("a per-command timeout wins over the session's commandTimeoutMs", async () => {
    const session = await sandbox.createSession({ commandTimeoutMs: 30_000 } as CreateSessionOptions);
    expect(await timesOut(() => session.exec("sleep 30", { timeout: 1000 }))).toBeLessThan(10_000);
  });

  it("a timed-out command has started and is stopped; its session can be deleted", async () => {
    const session = await sandbox.createSession();
    await timesOut(() => session.exec("touch /tmp/timeout-test-started && sleep 120 && touch /tmp/timeout-test-finished", { timeout: 1000 }));
    expect((await session.exec('test -f /tmp/timeout-test-started && echo "exists"')).stdout.trim()).toBe("exists");
    expect(await sandbox.deleteSession(session.id)).toMatchObject({ sessionId: session.id });
    expect((await sandbox.exec('test -f /tmp/timeout-test-finished && echo "exists" || echo "not-exists"')).stdout.trim()).toBe("not-exists");
    await sandbox.exec("rm -f /tmp/timeout-test-started /tmp/timeout-test-finished");
  });

  it("a streamed command past its timeout ends with an error event", async () => {
    const types: string[] = [];
    let code: string | undefined;
    for await (const event of sandbox.execStream("sleep 30", { timeout: 500 })) {
      types.push(event.type);
      if (event.type === "error") code = (event as { code?: string }).code;
    }
    expect(types.at(-1)).toBe("error");
    expect(code).toBe("EXECUTION_TIMEOUT");
  });
});
