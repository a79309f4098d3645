/**
 * A container server that cannot start (runtime/start-failure.ts, runtime/container-process.ts): the
 * runtime answers the start with a coded error and the server's last output, and leaves nothing of
 * that start running.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { serverEnv, type Launcher } from "../../runtime/launch.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { startRefusalOf } from "../../runtime/start-failure.ts";
import { eventually, runningWithEnv, runtimeCall, tempDataDir, type DataDir, type JsonReply } from "./helpers.ts";

/** A launcher running `script` with node in place of the container server. */
function scriptLauncher(script: string): Launcher {
  return {
    name: "script",
    launch: (spec) => ({ command: process.execPath, args: ["-e", script], env: serverEnv(spec), cwd: spec.workspace }),
  };
}

let dataDir: DataDir;
const runtimes: RunningRuntime[] = [];
beforeAll(() => {
  dataDir = tempDataDir();
});
afterAll(async () => {
  await Promise.all(runtimes.map((runtime) => runtime.close()));
  dataDir.remove();
});

async function runtimeWith(name: string, options: Parameters<typeof startRuntime>[0] = {}): Promise<RunningRuntime> {
  const runtime = await startRuntime({ dataDir: join(dataDir.path, name), isolation: "none", stopGraceMs: 1_000, ...options });
  runtimes.push(runtime);
  return runtime;
}

const start = (runtime: RunningRuntime, key: string, body: unknown = {}) => runtimeCall(runtime, "POST", `/containers/${key}/start`, body);

function expectError(reply: JsonReply, code: keyof typeof ERROR_CODES): void {
  expect(reply.status, JSON.stringify(reply.body)).toBe(ERROR_CODES[code]);
  expect(reply.body).toMatchObject({ success: false, code, httpStatus: ERROR_CODES[code], message: expect.any(String) });
}

/** Nothing of the key's start is left: no process, no pid file, no container in the pool. */
async function expectNothingRunning(runtime: RunningRuntime, key: string): Promise<void> {
  const workspace = join(runtime.dataDir, key, "workspace");
  // The server was awaited; what it started was SIGKILLed with it and may take a moment to go.
  expect(await eventually(() => runningWithEnv("WORKSPACE", workspace).length === 0, 3_000)).toBe(true);
  expect(existsSync(join(runtime.dataDir, key, "container.pid"))).toBe(false);
  expect(runtime.pool.size).toBe(0);
  expect((await runtimeCall(runtime, "GET", `/containers/${key}`)).body).toMatchObject({ key, running: false });
}

describe("a container server that refuses to start", () => {
  it("reports ISOLATION_UNAVAILABLE when bwrap is asked for where it cannot run", async () => {
    const runtime = await runtimeWith("no-bwrap", { bwrapPath: "/nonexistent/bwrap" });
    const reply = await start(runtime, "refused-bwrap", { isolation: { isolation: "bwrap" } });
    expectError(reply, "ISOLATION_UNAVAILABLE");
    expect(reply.body.message).toContain("bwrap");
    // The runtime knew before starting anything: the sandbox's container needs the bwrap it does not have.
    expect(reply.body.context).toMatchObject({ isolation: "bwrap", reason: expect.stringContaining("bwrap") });
    await expectNothingRunning(runtime, "refused-bwrap");
  });

  it("reports INVALID_REQUEST for an isolation path that does not exist", async () => {
    const runtime = await runtimeWith("bad-path");
    const reply = await start(runtime, "refused-path", { isolation: { readOnlyPaths: ["/nonexistent/for/sure"] } });
    expectError(reply, "INVALID_REQUEST");
    expect(reply.body.message).toContain("/nonexistent/for/sure");
    await expectNothingRunning(runtime, "refused-path");
  });

  it("reads a refusal only where the output names one of the refusal codes", () => {
    expect(startRefusalOf("[INVALID_REQUEST] isolation config: bad")).toEqual({ code: "INVALID_REQUEST", message: "isolation config: bad" });
    expect(startRefusalOf("Error: listen EADDRINUSE: address already in use")).toBeUndefined();
  });
});

describe("a container server that fails otherwise", () => {
  it("exits before it listens: CONTAINER_UNAVAILABLE with its last output", async () => {
    const runtime = await runtimeWith("exits", { launcher: scriptLauncher("console.error('out of luck'); process.exit(3)") });
    const reply = await start(runtime, "exits-early");
    expectError(reply, "CONTAINER_UNAVAILABLE");
    expect(reply.body.message).toContain("exited before it listened");
    expect(reply.body.context.logTail).toContain("out of luck");
    await expectNothingRunning(runtime, "exits-early");
  });

  it("never listens: CONTAINER_UNAVAILABLE after the start timeout, and the process is killed", async () => {
    const script = "require('node:child_process').spawn('sleep', ['300'], { stdio: 'ignore' }); setInterval(() => {}, 1000)";
    const runtime = await runtimeWith("silent", { launcher: scriptLauncher(script), startTimeoutMs: 1_000 });
    const reply = await start(runtime, "never-listens");
    expectError(reply, "CONTAINER_UNAVAILABLE");
    expect(reply.body.message).toContain("did not listen");
    await expectNothingRunning(runtime, "never-listens");
  });
});
