/**
 * Warm exec round trip: POST /api/execute over a keep-alive connection, against spawning the same
 * command directly with child_process in this process. Alternating the two spreads machine noise evenly.
 */
import { spawn } from "node:child_process";
import { median, ms, nowMs, percentile, postJson, startServerProcess } from "./support.ts";
import type { BenchModule } from "./types.ts";

const COMMAND = "echo hello";
const WARMUP = 30;
const RUNS = 400;

function directSpawn(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", COMMAND], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk));
    child.on("error", reject);
    child.on("close", () => resolve(out));
  });
}

const bench: BenchModule = {
  name: "container-exec",
  async run() {
    const server = await startServerProcess();
    try {
      const viaServer = async () => {
        const result = await postJson<{ stdout: string }>(server.url, "/api/execute", { command: COMMAND });
        if (result.stdout !== "hello\n") throw new Error(`unexpected output ${JSON.stringify(result)}`);
      };
      for (let i = 0; i < WARMUP; i++) {
        await viaServer();
        await directSpawn();
      }
      const ours: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        let t0 = nowMs();
        await viaServer();
        ours.push(nowMs() - t0);
        t0 = nowMs();
        await directSpawn();
        direct.push(nowMs() - t0);
      }
      const overhead = median(ours) - median(direct);
      return [
        {
          title: `Warm exec round trip (\`${COMMAND}\`, ${RUNS} runs, HTTP keep-alive)`,
          baselineLabel: "child_process.spawn, same command",
          rows: [
            { metric: "median", ours: ms(median(ours)), baseline: ms(median(direct)), target: "within ~1 ms of baseline", met: overhead <= 1 },
            { metric: "p99", ours: ms(percentile(ours, 99)), baseline: ms(percentile(direct, 99)) },
            { metric: "median overhead", ours: ms(overhead), baseline: "0.00 ms" },
          ],
        },
      ];
    } finally {
      await server.close();
    }
  },
};

export default bench;
