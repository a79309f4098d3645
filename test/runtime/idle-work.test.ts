/**
 * The local runtime makes room at its cap by the same rule the Durable Object sleeps by: a sandbox
 * whose only process was started with `keepAlive: false` is idle and may sleep; one running a code
 * cell is busy and is never taken.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { containerCall, runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";

describe("making room by work", () => {
  let dataDir: DataDir;
  let runtime: RunningRuntime;
  beforeAll(async () => {
    dataDir = tempDataDir();
    runtime = await startRuntime({ dataDir: dataDir.path, isolation: "none", maxContainers: 1, stopGraceMs: 1_000, minQuietMs: 300 });
  });
  afterAll(async () => {
    await runtime.close();
    dataDir.remove();
  });

  const start = (key: string) => runtimeCall(runtime, "POST", `/containers/${key}/start`, {});
  const running = async (key: string) => (await runtimeCall(runtime, "GET", `/containers/${key}`)).body.running as boolean;

  it("takes a sandbox whose process does not keep it awake, never one running a code cell", async () => {
    expect((await start("work-a")).status).toBe(200);
    const started = await containerCall(await runtime.pool.start("work-a", {}), "POST", "/api/process/start", { command: "sleep 60", keepAlive: false });
    expect(started.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await start("work-b")).status).toBe(200);
    expect(await running("work-a")).toBe(false);

    const cell = containerCall(await runtime.pool.start("work-b", {}), "POST", "/api/code/run", {
      code: "await new Promise((resolve) => setTimeout(resolve, 3000)); 1",
      language: "javascript",
    });
    await new Promise((resolve) => setTimeout(resolve, 600));
    const refused = await start("work-c");
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe("TOO_MANY_SANDBOXES");
    expect(await running("work-b")).toBe(true);
    expect((await cell).status).toBe(200);
  });
});
