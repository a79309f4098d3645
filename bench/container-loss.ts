/**
 * Lost bytes over many fast runs: commands that write a known amount and exit at once, run through
 * the buffered and the streamed exec, compared with what the same command writes when spawned
 * directly. The tail of fast output is where relays usually lose bytes.
 */
import { spawn } from "node:child_process";
import type { ExecEvent } from "../protocol/events.ts";
import { SseParser } from "../protocol/sse.ts";
import { keepAliveAgent, postJson, startServerProcess } from "./support.ts";
import { request } from "node:http";
import type { BenchModule } from "./types.ts";

const RUNS = 200;
const CONCURRENCY = 4;
// stdout and stderr, interleaved, ending without a newline, then an immediate exit.
const COMMAND = "seq 1 20000; seq 1 3000 >&2; printf 'tail-without-newline'";

function direct(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", COMMAND], { stdio: ["ignore", "pipe", "pipe"] });
    let bytes = 0;
    child.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length));
    child.stderr.on("data", (chunk: Buffer) => (bytes += chunk.length));
    child.on("error", reject);
    child.on("close", () => resolve(bytes));
  });
}

async function buffered(url: string): Promise<number> {
  const result = await postJson<{ stdout: string; stderr: string }>(url, "/api/execute", { command: COMMAND });
  return Buffer.byteLength(result.stdout) + Buffer.byteLength(result.stderr);
}

function streamed(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ command: COMMAND });
    const req = request(`${url}/api/execute/stream`, { method: "POST", agent: keepAliveAgent, headers: { "content-length": Buffer.byteLength(body) } }, (res) => {
      const parser = new SseParser();
      const decoder = new TextDecoder();
      let bytes = 0;
      let complete = false;
      res.on("data", (chunk: Buffer) => {
        for (const message of parser.push(decoder.decode(chunk, { stream: true }))) {
          const event = JSON.parse(message.data) as ExecEvent;
          if (event.type === "stdout" || event.type === "stderr") bytes += Buffer.byteLength(event.data);
          if (event.type === "complete") complete = true;
        }
      });
      res.on("end", () => (complete ? resolve(bytes) : reject(new Error("stream ended without complete"))));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function runMany(run: () => Promise<number>, expected: number): Promise<{ lost: number; shortRuns: number }> {
  let lost = 0;
  let shortRuns = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < RUNS) {
        const missing = expected - (await run());
        lost += missing;
        if (missing !== 0) shortRuns++;
      }
    }),
  );
  return { lost, shortRuns };
}

const bench: BenchModule = {
  name: "container-loss",
  async run() {
    const server = await startServerProcess();
    try {
      const expected = await direct();
      const baseline = await runMany(direct, expected);
      const viaBuffered = await runMany(() => buffered(server.url), expected);
      const viaStream = await runMany(() => streamed(server.url), expected);
      const fmt = (r: { lost: number; shortRuns: number }) => `${r.lost} B (${r.shortRuns}/${RUNS} runs short)`;
      return [
        {
          title: `Lost bytes over ${RUNS} fast runs each (${expected} bytes per run, ${CONCURRENCY} at a time)`,
          baselineLabel: "child_process.spawn directly",
          rows: [
            { metric: "POST /api/execute", ours: fmt(viaBuffered), baseline: fmt(baseline), target: "0", met: viaBuffered.lost === 0 },
            { metric: "POST /api/execute/stream", ours: fmt(viaStream), baseline: fmt(baseline), target: "0", met: viaStream.lost === 0 },
          ],
        },
      ];
    } finally {
      await server.close();
    }
  },
};

export default bench;
