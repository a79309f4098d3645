/**
 * No survivors without isolation: a command that leaves its process group — `setsid cmd &`, a
 * double fork, `nohup` — still ends when its root times out or is killed, on kill-all (also after its
 * root finished) and when the server closes. Every command carries its run's tag (SANDBOX_RUN_TAG),
 * which its descendants inherit wherever they move.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { call, eventually, processes, startTestServer, type TestServer } from "./helpers.ts";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ killGraceMs: 300 });
});
afterAll(() => t.close());

/** Starts daemons three ways and prints their pids: a new session, a double fork, nohup. */
const DAEMONS =
  "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!; " +
  "(setsid sh -c 'sleep 301 & echo $!' >&3 3>&- </dev/null 2>/dev/null &) 3>&1 | head -1; " +
  "nohup setsid sleep 302 >/dev/null 2>&1 </dev/null & echo $!";

function alive(pids: number[]): number[] {
  const running = new Set(processes().filter((p) => p.state !== "Z").map((p) => p.pid));
  return pids.filter((pid) => running.has(pid));
}

function pidsOf(stdout: string): number[] {
  const pids = stdout.trim().split("\n").map(Number);
  expect(pids).toHaveLength(3);
  for (const pid of pids) expect(pid).toBeGreaterThan(1);
  return pids;
}

describe("daemons that leave their process group", () => {
  it("end when their root times out", async () => {
    const { body } = await call(t.url, "POST", "/api/execute", { command: `${DAEMONS}; sleep 30`, timeout: 1_000 });
    expect(body).toMatchObject({ code: "EXECUTION_TIMEOUT", context: { timedOut: true, exitCode: 124 } });
    const pids = pidsOf(body.context.stdout);
    expect(await eventually(() => alive(pids).length === 0, 3_000)).toBe(true);
  });

  it("end when their root is killed", async () => {
    await call(t.url, "POST", "/api/process/start", { command: `${DAEMONS}; sleep 30`, processId: "root-killed" });
    const logs = async () => (await call(t.url, "GET", "/api/process/root-killed/logs")).body.stdout as string;
    expect(await eventually(async () => (await logs()).trim().split("\n").length === 3)).toBe(true);
    const pids = pidsOf(await logs());
    expect(alive(pids)).toEqual(pids);
    await call(t.url, "DELETE", "/api/process/root-killed");
    expect(await eventually(() => alive(pids).length === 0, 3_000)).toBe(true);
  });

  it("outlive a root that finished by itself, and end on kill-all", async () => {
    const { body } = await call(t.url, "POST", "/api/execute", { command: DAEMONS });
    expect(body).toMatchObject({ exitCode: 0, timedOut: false });
    const pids = pidsOf(body.stdout);
    // Left running on purpose, as in a container: a command may start a server and return.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(alive(pids)).toEqual(pids);
    await call(t.url, "DELETE", "/api/process/kill-all");
    expect(await eventually(() => alive(pids).length === 0, 3_000)).toBe(true);
  });

  it("carry their run's tag, which a command's own env cannot replace", async () => {
    const { body } = await call(t.url, "POST", "/api/execute", { command: `echo "$${RUN_TAG_VAR}"`, env: { [RUN_TAG_VAR]: "mine" } });
    expect(body.stdout).toMatch(/^[\w-]+\/\d+\n$/);
    expect(body.stdout).not.toContain("mine");
  });

  it("end when the server closes", async () => {
    const other = await startTestServer({ killGraceMs: 300 });
    const { body } = await call(other.url, "POST", "/api/execute", { command: DAEMONS });
    const pids = pidsOf(body.stdout);
    expect(alive(pids)).toEqual(pids);
    await other.close();
    expect(await eventually(() => alive(pids).length === 0, 3_000)).toBe(true);
  });
});
