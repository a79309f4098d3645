/**
 * Secrets on loopback: the runtime answers only to its own secret, each container server only to the
 * one its run was given, and neither secret is written where another process of the machine can read
 * it (argv and environment of every process, including the container server a command runs under).
 */
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { call, containerCall, runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";

let dataDir: DataDir;
let runtime: RunningRuntime;
beforeAll(async () => {
  dataDir = tempDataDir();
  runtime = await startRuntime({ dataDir: dataDir.path, isolation: "none", stopGraceMs: 1_000 });
});
afterAll(async () => {
  await runtime.close();
  dataDir.remove();
});

/** Pids whose argv or environment contains `text`. */
function processesShowing(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    for (const file of ["cmdline", "environ"]) {
      try {
        if (readFileSync(`/proc/${entry}/${file}`, "latin1").includes(text)) found.push(Number(entry));
      } catch {
        // gone, or not ours to read
      }
    }
  }
  return found;
}

describe("the runtime", () => {
  it("refuses every call without its secret, and starts nothing", async () => {
    for (const secret of [undefined, "wrong", `${runtime.secret}x`]) {
      const reply = await call(runtime.url, "POST", "/containers/secret-none/start", { isolation: { isolation: "none" } }, secret);
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ success: false, code: "UNAUTHORIZED" });
    }
    expect((await call(runtime.url, "GET", "/health")).status).toBe(401);
    expect((await call(runtime.url, "DELETE", "/containers/secret-none")).status).toBe(401);
    expect((await runtimeCall(runtime, "GET", "/containers/secret-none")).body).toEqual({ key: "secret-none", running: false });
  });
});

describe("a container server", () => {
  it("answers only to the secret of its own run", async () => {
    const started = await runtimeCall(runtime, "POST", "/containers/secret-one/start", {});
    expect(started.status).toBe(200);
    const { secret } = started.body;
    expect(secret).toMatch(/^[\w-]{40,}$/);
    const container = runtime.pool.info("secret-one");
    const url = `http://127.0.0.1:${container.ports!["3000"]}`;

    for (const wrong of [undefined, runtime.secret, "x"]) {
      expect((await call(url, "POST", "/api/execute", { command: "touch pwned" }, wrong)).status).toBe(401);
    }
    expect((await call(url, "POST", "/api/execute", { command: "ls" }, secret)).body).toMatchObject({ exitCode: 0, stdout: "" });
    // The secret is never shown again.
    expect((await runtimeCall(runtime, "GET", "/containers/secret-one")).body).not.toHaveProperty("secret");
  });

  it("keeps both secrets off every argv and environment, where commands could read them", async () => {
    const container = await runtime.pool.start("secret-two", {});
    const serverPid = container.info().pid!;
    // What a command can see of its own server and of every other process.
    const seen = await containerCall(container, "POST", "/api/execute", {
      command: `cat /proc/${serverPid}/environ /proc/${serverPid}/cmdline; env; cat /proc/*/cmdline /proc/*/environ 2>/dev/null; true`,
    });
    expect(seen.body.exitCode).toBe(0);
    expect(seen.body.stdout.length).toBeGreaterThan(100);
    for (const secret of [runtime.secret, container.secret]) {
      expect(seen.body.stdout).not.toContain(secret);
      expect(processesShowing(secret)).toEqual([]);
    }
  });
});
