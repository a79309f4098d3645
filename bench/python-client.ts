/**
 * The Python client (clients/python) beside raw httpx, in the same run against one stack: an exec
 * round trip's overhead (median) and streamed output's throughput, each also in the client
 * process's CPU time, which neither the service's speed nor a busy machine moves. The measuring is
 * done in Python (bench/python-client.py), with Debian's interpreter and httpx.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { SYSTEM_PYTHON } from "../scripts/os-packages/packages.ts";
import { startStack } from "./chain-stack.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const DRIVER = fileURLToPath(new URL("./python-client.py", import.meta.url));
const SOURCE = fileURLToPath(new URL("../clients/python/src", import.meta.url));

interface Figures {
  execRounds: number;
  execOursMs: number;
  execRawMs: number;
  execOursCpuMs: number;
  execRawCpuMs: number;
  streamRounds: number;
  streamBytes: number;
  streamOursMBps: number;
  streamRawMBps: number;
  streamOursCpuMsPerMB: number;
  streamRawCpuMsPerMB: number;
}

function measure(url: string, token: string): Promise<Figures> {
  return new Promise((resolve, reject) => {
    const child = spawn(SYSTEM_PYTHON, [DRIVER, url, token, `py-bench-${Date.now().toString(36)}`], {
      env: { ...process.env, PYTHONPATH: SOURCE, PYTHONDONTWRITEBYTECODE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(stdout) as Figures) : reject(new Error(`${DRIVER} exited ${code}:\n${stderr}`))));
  });
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const mbps = (value: number) => `${value.toFixed(1)} MB/s`;

const bench: BenchModule = {
  name: "python-client",
  async run(): Promise<BenchTable[]> {
    const stack = await startStack();
    try {
      const f = await measure(stack.url, stack.token);
      const overhead = f.execOursMs - f.execRawMs;
      const share = f.streamOursMBps / f.streamRawMBps;
      return [
        {
          title: "The Python client beside raw httpx (same run, same stack)",
          baselineLabel: "raw httpx, the same request",
          rows: [
            {
              metric: `\`Sandbox.exec("true")\` round trip, median of ${f.execRounds}`,
              ours: `${ms(f.execOursMs)} (${overhead >= 0 ? "+" : ""}${ms(overhead)})`,
              baseline: ms(f.execRawMs),
              target: "≤ baseline + 0.5 ms",
              met: overhead <= 0.5,
            },
            {
              metric: "the same, CPU time of the client per call, median",
              ours: ms(f.execOursCpuMs),
              baseline: ms(f.execRawCpuMs),
            },
            {
              metric: `\`exec_stream\` output, every event parsed, median of ${f.streamRounds} × ${f.streamBytes / 2 ** 20} MiB`,
              ours: `${mbps(f.streamOursMBps)} (${(share * 100).toFixed(0)}%)`,
              baseline: `${mbps(f.streamRawMBps)} reading the bytes only`,
              target: "≥ 80% of baseline",
              met: share >= 0.8,
            },
            {
              metric: "the same, CPU time of the client per MB, median",
              ours: ms(f.streamOursCpuMsPerMB),
              baseline: ms(f.streamRawCpuMsPerMB),
            },
          ],
          notes: [
            "Rounds alternate which side goes first. The stream is `yes` cut by `head -c` through the whole chain (Worker, Durable Object, container); " +
              "the client's CPU per MB says how far it is from being what limits a stream.",
          ],
        },
      ];
    } finally {
      await stack.close();
    }
  },
};

export default bench;
