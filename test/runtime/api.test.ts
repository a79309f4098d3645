/**
 * The local runtime's HTTP API (protocol/runtime.ts) over a real HTTP server: start a container,
 * reach its server through the port the runtime reports, watch and destroy it; bad calls get a
 * coded error with the right status.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../protocol/errors.ts";
import { CONTAINER_SERVER_PORT, type RuntimeContainerInfo } from "../../protocol/runtime.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { call, containerCall, runtimeCall, tempDataDir, type DataDir, type JsonReply } from "./helpers.ts";

let dataDir: DataDir;
let runtime: RunningRuntime;
beforeAll(async () => {
  dataDir = tempDataDir();
  runtime = await startRuntime({ dataDir: dataDir.path, isolation: "none", stopGraceMs: 2_000 });
});
afterAll(async () => {
  await runtime.close();
  dataDir.remove();
});

const api = (method: string, path: string, body?: unknown) => runtimeCall(runtime, method, path, body);

function expectError(reply: JsonReply, code: keyof typeof ERROR_CODES): void {
  expect(reply.status, JSON.stringify(reply.body)).toBe(ERROR_CODES[code]);
  expect(reply.body).toMatchObject({ success: false, code, httpStatus: ERROR_CODES[code], message: expect.any(String) });
  expect(Date.parse(reply.body.timestamp)).not.toBeNaN();
}

describe("runtime API", () => {
  it("reports its health and what isolation the machine offers", async () => {
    expect(await api("GET", "/health")).toMatchObject({
      status: 200,
      body: { status: "ok", containers: 0, maxContainers: 32, warmServers: 0, warmPoolSize: 0, isolation: "none", allowedPaths: [], networkAllowed: true, dataDir: runtime.dataDir },
    });
    const isolation = await api("GET", "/isolation");
    expect(isolation).toMatchObject({ status: 200, body: { none: { available: true }, bwrap: { available: expect.any(Boolean) } } });
  });

  it("starts a container, fetches through to its server, and destroys it", async () => {
    const started = await api("POST", "/containers/api-one/start", { env: { GREETING: "hi" } });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const info = started.body as RuntimeContainerInfo;
    expect(info).toMatchObject({ key: "api-one", running: true, runId: expect.any(String), pid: expect.any(Number) });
    const port = info.ports![String(CONTAINER_SERVER_PORT)]!;
    const server = `http://127.0.0.1:${port}`;

    const exec = await call(server, "POST", "/api/execute", { command: "echo through" }, started.body.secret);
    expect(exec).toMatchObject({ status: 200, body: { exitCode: 0, stdout: "through\n" } });

    // A second start of a running key answers with the same run.
    expect((await api("POST", "/containers/api-one/start", {})).body).toMatchObject({ runId: info.runId, running: true });
    expect((await api("GET", "/containers/api-one")).body).toMatchObject({ runId: info.runId, running: true });
    expect((await api("GET", "/health")).body.containers).toBe(1);

    const destroyed = await api("DELETE", "/containers/api-one");
    expect(destroyed).toMatchObject({ status: 200, body: { key: "api-one", running: false, runId: info.runId, exitCode: 137 } });
    expect((await api("GET", `/containers/api-one/exit?runId=${info.runId}&waitMs=5000`)).body).toMatchObject({ running: false, runId: info.runId });
    expect((await api("GET", "/health")).body.containers).toBe(0);
    await expect(fetch(`${server}/api/ping`)).rejects.toThrow();
  });

  it("signals a container and answers a long poll when it exits", async () => {
    const { body: info } = await api("POST", "/containers/api-two/start", {});
    expect((await api("GET", `/containers/api-two/exit?runId=${info.runId}&waitMs=0`)).body).toMatchObject({ running: true });
    const exit = api("GET", `/containers/api-two/exit?runId=${info.runId}&waitMs=20000`);
    expect(await api("POST", "/containers/api-two/signal", { signal: 15 })).toMatchObject({ status: 200, body: { runId: info.runId } });
    expect((await exit).body).toMatchObject({ running: false, runId: info.runId, exitCode: 0 });
  });

  it("answers an unknown route with 404 NOT_FOUND and a wrong method with 405", async () => {
    expectError(await api("GET", "/nope"), "NOT_FOUND");
    expectError(await api("GET", "/containers/api-one/start/again"), "NOT_FOUND");
    const wrong = await api("PUT", "/containers/api-one");
    expectError(wrong, "METHOD_NOT_ALLOWED");
    expect(wrong.headers.get("allow")).toBe("GET, DELETE");
    expectError(await api("GET", "/containers/api-one/start"), "METHOD_NOT_ALLOWED");
  });

  it("refuses a key that is not a sandbox id", async () => {
    expectError(await api("POST", "/containers/..hidden/start", {}), "INVALID_SANDBOX_ID");
    expectError(await api("GET", `/containers/${encodeURIComponent("has space")}`), "INVALID_SANDBOX_ID");
  });

  it("answers bad bodies with 400 and a code", async () => {
    expectError(await api("POST", "/containers/api-bad/start", "{not json"), "INVALID_JSON");
    const badEnv = await api("POST", "/containers/api-bad/start", { env: { A: 1 } });
    expectError(badEnv, "INVALID_REQUEST");
    expect(badEnv.body.context.issues[0]).toMatchObject({ path: "env.A" });
    expectError(await api("POST", "/containers/api-bad/start", { isolation: { isolation: "docker" } }), "INVALID_REQUEST");
    expectError(await api("POST", "/containers/api-bad/start", { enableInternet: "yes" }), "INVALID_REQUEST");
    expectError(await api("POST", "/containers/api-bad/start", [1, 2]), "INVALID_REQUEST");
    expectError(await api("POST", "/containers/api-bad/signal", { signal: "SIGTERM" }), "INVALID_SIGNAL");
    expectError(await api("POST", "/containers/api-bad/signal", { signal: 99 }), "INVALID_SIGNAL");
    expectError(await api("POST", "/containers/api-bad/signal", ""), "INVALID_SIGNAL");
    expectError(await api("POST", "/containers/api-bad/start", { env: { BIG: "x".repeat(2 * 1024 * 1024) } }), "PAYLOAD_TOO_LARGE");
    // None of them started anything.
    expect((await api("GET", "/containers/api-bad")).body).toEqual({ key: "api-bad", running: false });
  });
});

describe("the runtime's limit of live sandboxes", () => {
  it("puts the idlest sandbox to sleep to make room, and refuses with 429 only when every one is busy", async () => {
    const limited = await startRuntime({ dataDir: `${dataDir.path}/limited`, isolation: "none", maxContainers: 2, stopGraceMs: 1_000, minQuietMs: 300 });
    try {
      const start = (key: string) => runtimeCall(limited, "POST", `/containers/${key}/start`, {});
      const busy = async (key: string) =>
        expect((await containerCall(await limited.pool.start(key, {}), "POST", "/api/process/start", { command: "sleep 60", processId: "busy" })).status).toBe(200);
      expect((await start("lim-a")).status).toBe(200);
      expect((await start("lim-b")).status).toBe(200);
      await busy("lim-a");
      // Quiet for a while (this runtime's minQuietMs) with nothing running and nobody reading, lim-b sleeps: lim-c takes its place.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect((await start("lim-c")).status).toBe(200);
      expect((await runtimeCall(limited, "GET", "/containers/lim-b")).body).toMatchObject({ running: false });
      expect((await runtimeCall(limited, "GET", "/containers/lim-a")).body).toMatchObject({ running: true });
      await busy("lim-c");
      const refused = await start("lim-d");
      expectError(refused, "TOO_MANY_SANDBOXES");
      expect(refused.body.context).toEqual({ limit: 2 });
      expect(refused.body.message).toMatch(/SANDBOX_MAX_SANDBOXES.*all are busy/);
      expect((await runtimeCall(limited, "GET", "/containers/lim-d")).body).toEqual({ key: "lim-d", running: false });
      // A running one starts again as it is; a destroyed one makes room.
      expect((await start("lim-a")).status).toBe(200);
      await runtimeCall(limited, "DELETE", "/containers/lim-c");
      expect((await start("lim-d")).status).toBe(200);
      expect((await runtimeCall(limited, "GET", "/health")).body).toMatchObject({ containers: 2, maxContainers: 2 });
    } finally {
      await limited.close();
    }
  });
});

describe("two runtimes on one data folder", () => {
  it("the second refuses in one line, and never stops the first one's sandboxes", async () => {
    const dir = tempDataDir();
    const first = await startRuntime({ dataDir: dir.path, isolation: "none" });
    try {
      const started = await runtimeCall(first, "POST", "/containers/lock-a/start", {});
      expect(started.status).toBe(200);
      // Another process tries the same folder (in this process the lock is ours to take again).
      const second = spawnSync(process.execPath, ["-e", `import(${JSON.stringify(new URL("../../runtime/server.ts", import.meta.url).href)}).then(m => m.startRuntime({ dataDir: ${JSON.stringify(dir.path)}, isolation: "none" })).then(() => process.exit(0), (e) => { console.error(e.message); process.exit(3); })`], { encoding: "utf8" });
      expect(second.status).toBe(3);
      expect(second.stderr).toContain(`another runtime (pid ${process.pid}) uses ${dir.path}`);
      expect((await runtimeCall(first, "GET", "/containers/lock-a")).body).toMatchObject({ running: true });
    } finally {
      await first.close();
      dir.remove();
    }
  });
});

describe("a sandbox just started", () => {
  it("is not put to sleep to make room before its first call had time to come", async () => {
    const limited = await startRuntime({ dataDir: `${dataDir.path}/fresh`, isolation: "none", maxContainers: 1, stopGraceMs: 1_000, minQuietMs: 60_000 });
    try {
      const start = (key: string) => runtimeCall(limited, "POST", `/containers/${key}/start`, {});
      expect((await start("fresh-a")).status).toBe(200);
      expectError(await start("fresh-b"), "TOO_MANY_SANDBOXES");
      expect((await runtimeCall(limited, "GET", "/containers/fresh-a")).body).toMatchObject({ running: true });
    } finally {
      await limited.close();
    }
  });
});
