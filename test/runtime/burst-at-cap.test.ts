/**
 * Starts that find the runtime at its cap all at once, the way a burst of new sandboxes arrives:
 * each puts an idle sandbox of its own to sleep, so every one of them starts. Before, the starts
 * asked every server how idle it was at the same time and each saw the others' questions as open
 * requests (or all chose the same sandbox), and the whole burst was refused. A server that answers
 * late (a busy machine) is asked again before the start is refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MIN_QUIET_MS } from "../../runtime/idle.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { runtimeSettingsFromEnv } from "../../runtime/settings.ts";
import { runtimeCall, tempDataDir, type DataDir } from "./helpers.ts";

let dataDir: DataDir | undefined;
let runtime: RunningRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  dataDir?.remove();
});

async function startAtCap(max: number, minQuietMs?: number): Promise<RunningRuntime> {
  dataDir = tempDataDir();
  runtime = await startRuntime({
    ...runtimeSettingsFromEnv({ SANDBOX_MAX_SANDBOXES: String(max), SANDBOX_WARM_POOL: "0", SANDBOX_ISOLATION: "none" }),
    dataDir: dataDir.path,
    stopGraceMs: 1_000,
    ...(minQuietMs === undefined ? {} : { minQuietMs }),
  });
  return runtime;
}

const start = (runtime: RunningRuntime, key: string) => runtimeCall(runtime, "POST", `/containers/${key}/start`, {});
const running = async (runtime: RunningRuntime, key: string) => (await runtimeCall(runtime, "GET", `/containers/${key}`)).body.running as boolean;
const keys = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe("a burst at the cap", () => {
  it("starts four new sandboxes at once on four quiet ones (SANDBOX_MAX_SANDBOXES=4)", async () => {
    const runtime = await startAtCap(4);
    const quiet = keys("quiet", 4);
    for (const key of quiet) expect((await start(runtime, key)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, MIN_QUIET_MS + 3_000));

    const burst = await Promise.all(keys("burst", 4).map((key) => start(runtime, key)));
    expect(burst.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    // Four different sandboxes made room: none of the quiet ones is left, and the cap held.
    expect(await Promise.all(quiet.map((key) => running(runtime, key)))).toEqual([false, false, false, false]);
    expect(runtime.pool.size).toBe(4);
  }, 120_000);

  it("asks a quiet sandbox whose server answered late again, rather than refusing the start", async () => {
    const runtime = await startAtCap(1, 1_000);
    expect((await start(runtime, "late")).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // Its server stopped through the first survey (as a server starved of CPU is), back during the second.
    const pid = runtime.pool.info("late").pid!;
    const resume = () => {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone already: it was put to sleep
      }
    };
    process.kill(pid, "SIGSTOP");
    const timer = setTimeout(resume, 3_000);
    try {
      const answer = await start(runtime, "after");
      expect(answer.body).toMatchObject({ running: true });
    } finally {
      clearTimeout(timer);
      resume();
    }
    expect(await running(runtime, "late")).toBe(false);
  }, 60_000);

  it("starts 20 new sandboxes at once on 30 live ones at a cap of 30", async () => {
    const runtime = await startAtCap(30, 1_000);
    const live = keys("live", 30);
    for (const key of live) expect((await start(runtime, key)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const burst = await Promise.all(keys("new", 20).map((key) => start(runtime, key)));
    expect(burst.filter((answer) => answer.status !== 200).map((answer) => answer.body)).toEqual([]);
    const stillRunning = await Promise.all(live.map((key) => running(runtime, key)));
    expect(stillRunning.filter(Boolean)).toHaveLength(10);
    expect(runtime.pool.size).toBe(30);
  }, 300_000);
});
