/**
 * Warm exec round trip: POST /api/execute over a keep-alive connection, against spawning the same
 * command directly with child_process in this process. Alternating the two spreads machine noise evenly.
 *
 * Forking costs in proportion to the resident memory of the process that forks, so the figure also
 * depends on how big each process is: both sizes are shown, and, for scale, the same direct spawn
 * from a fresh minimal Node process. Streaming a lot of output leaves the server bigger (the C heap
 * keeps freed read buffers), so the round trip is measured again after a large stream.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fastWriter, streamThrough } from "./container-stream.ts";
import { median, mib, ms, nowMs, percentile, postJson, rssBytes, startServerProcess } from "./support.ts";
import type { BenchModule } from "./types.ts";

const COMMAND = "echo hello";
const WARMUP = 30;
const RUNS = 400;
const RUNS_AFTER_STREAM = 200;
const STREAM_BYTES = 256 * 1024 * 1024;
/** What the server may add to a bare spawn: median and p99, ms. */
const MEDIAN_AIM = 0.3;
const P99_AIM = 1;

function directSpawn(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", COMMAND], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk));
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

/** A plain-JS Node process that spawns COMMAND once per line it reads and answers with the milliseconds. */
function minimalSpawner(): { spawnOnce(): Promise<number>; pid: number; close(): void } {
  const source = `
    const { spawn } = require("node:child_process");
    require("node:readline").createInterface({ input: process.stdin }).on("line", () => {
      const t0 = performance.now();
      const child = spawn("bash", ["-c", ${JSON.stringify(COMMAND)}], { stdio: ["ignore", "pipe", "pipe"] });
      child.stdout.on("data", () => {});
      child.on("close", () => process.stdout.write((performance.now() - t0) + "\\n"));
    });`;
  const child: ChildProcess = spawn(process.execPath, ["-e", source], { stdio: ["pipe", "pipe", "inherit"] });
  const answers: ((ms: number) => void)[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => answers.shift()?.(Number(line)));
  return {
    pid: child.pid!,
    spawnOnce: () =>
      new Promise((resolve) => {
        answers.push(resolve);
        child.stdin!.write("\n");
      }),
    close: () => child.kill(),
  };
}

const bench: BenchModule = {
  name: "container-exec",
  async run() {
    const server = await startServerProcess();
    const minimal = minimalSpawner();
    try {
      const viaServer = async () => {
        const result = await postJson<{ stdout: string }>(server.url, "/api/execute", { command: COMMAND });
        if (result.stdout !== "hello\n") throw new Error(`unexpected output ${JSON.stringify(result)}`);
      };
      for (let i = 0; i < WARMUP; i++) {
        await viaServer();
        await directSpawn();
        await minimal.spawnOnce();
      }
      const ours: number[] = [];
      const direct: number[] = [];
      const fromMinimal: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        let t0 = nowMs();
        await viaServer();
        ours.push(nowMs() - t0);
        t0 = nowMs();
        await directSpawn();
        direct.push(nowMs() - t0);
        fromMinimal.push(await minimal.spawnOnce());
      }
      const overhead = median(ours) - median(direct);
      const serverRss = rssBytes(server.pid);
      const benchRss = process.memoryUsage.rss();

      await streamThrough(server.url, fastWriter(STREAM_BYTES));
      const oursAfter: number[] = [];
      const directAfter: number[] = [];
      for (let i = 0; i < RUNS_AFTER_STREAM; i++) {
        let t0 = nowMs();
        await viaServer();
        oursAfter.push(nowMs() - t0);
        t0 = nowMs();
        await directSpawn();
        directAfter.push(nowMs() - t0);
      }
      return [
        {
          title: `Warm exec round trip (\`${COMMAND}\`, ${RUNS} runs, HTTP keep-alive)`,
          baselineLabel: "child_process.spawn, same command",
          rows: [
            { metric: "median", ours: ms(median(ours)), baseline: ms(median(direct)), target: `≤ baseline + ${ms(MEDIAN_AIM)}`, met: overhead <= MEDIAN_AIM },
            {
              metric: "p99",
              ours: ms(percentile(ours, 99)),
              baseline: ms(percentile(direct, 99)),
              target: `≤ baseline + ${ms(P99_AIM)}`,
              met: percentile(ours, 99) - percentile(direct, 99) <= P99_AIM,
            },
            { metric: "median overhead", ours: ms(overhead), baseline: "0.00 ms" },
            {
              metric: "resident memory of the process that forks",
              ours: `${mib(serverRss)} (server)`,
              baseline: `${mib(benchRss)} (benchmark)`,
            },
            {
              metric: `median after the server streamed ${STREAM_BYTES / 1024 / 1024} MiB (${RUNS_AFTER_STREAM} runs)`,
              ours: `${ms(median(oursAfter))} (server RSS ${mib(rssBytes(server.pid))})`,
              baseline: `${ms(median(directAfter))} (benchmark RSS ${mib(process.memoryUsage.rss())})`,
            },
            {
              metric: "for scale: direct spawn from a fresh minimal Node process",
              ours: "",
              baseline: `${ms(median(fromMinimal))} (RSS ${mib(rssBytes(minimal.pid))})`,
            },
          ],
        },
      ];
    } finally {
      minimal.close();
      await server.close();
    }
  },
};

export default bench;
