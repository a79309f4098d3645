/**
 * The whole chain — wrangler dev → Worker → Sandbox Durable Object → local runtime's container server —
 * beside the same calls made directly to that very container server, in one run: exec round-trip
 * latency and streamed output throughput.
 */
import type { RuntimeStartAnswer } from "../protocol/runtime.ts";
import { percentile, send, startStack } from "./chain-stack.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const EXEC_ROUNDS = 300;
const STREAM_BYTES = 256 * 1024 * 1024;
const STREAM_ROUNDS = 3;
/** Printable output at full speed: `yes` repeating a 64-byte line, cut to size. */
const STREAM_COMMAND = `yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_- | head -c ${STREAM_BYTES}`;

const ms = (value: number) => `${value.toFixed(2)} ms`;
const mbps = (bytes: number, millis: number) => bytes / (1024 * 1024) / (millis / 1000);

async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

const bench: BenchModule = {
  name: "chain-exec",
  async run(): Promise<BenchTable[]> {
    const stack = await startStack();
    try {
      const sandbox = `${stack.url}/v1/sandboxes/bench`;
      const auth = { authorization: `Bearer ${stack.token}` };
      const chainExec = () => send(`${sandbox}/exec`, "POST", { command: "true" }, auth);
      const warm = await chainExec();
      if (warm.status !== 200) throw new Error(`chain exec failed: ${warm.status} ${warm.body}`);
      // The very container server the chain reached, addressed directly (a start of a running
      // container answers with that run and its secret).
      const runtimeAuth = { authorization: `Bearer ${stack.runtimeSecret}` };
      const info = JSON.parse((await send(`${stack.runtimeUrl}/containers/bench/start`, "POST", {}, runtimeAuth)).body) as RuntimeStartAnswer;
      const direct = `http://127.0.0.1:${info.ports?.["3000"]}`;
      const directAuth = { authorization: `Bearer ${info.secret}` };
      const directExec = () => send(`${direct}/api/execute`, "POST", { command: "true" }, directAuth);

      for (let i = 0; i < 30; i++) {
        await chainExec();
        await directExec();
      }
      // The platform's own hops, measured alongside: wrangler dev → Worker (a route that answers at
      // once), and → Worker → Durable Object (sandbox info: an RPC that does not reach the container).
      const workerOnly = () => send(`${stack.url}/health`, "GET", undefined);
      const workerAndObject = () => send(sandbox, "GET", undefined, auth);
      const chainTimes: number[] = [];
      const directTimes: number[] = [];
      const workerTimes: number[] = [];
      const objectTimes: number[] = [];
      for (let i = 0; i < EXEC_ROUNDS; i++) {
        // Interleaved, so drift in machine load hits all alike.
        chainTimes.push(await timed(chainExec));
        directTimes.push(await timed(directExec));
        workerTimes.push(await timed(workerOnly));
        objectTimes.push(await timed(workerAndObject));
      }
      for (const list of [chainTimes, directTimes, workerTimes, objectTimes]) list.sort((a, b) => a - b);
      const chainMedian = percentile(chainTimes, 50);
      const directMedian = percentile(directTimes, 50);
      const platformHop = percentile(objectTimes, 50);

      const stream = async (url: string, headers: Record<string, string>) => {
        let bytes = 0;
        const millis = await timed(async () => {
          const reply = await send(url, "POST", { command: STREAM_COMMAND }, headers, true);
          if (reply.status !== 200) throw new Error(`stream failed: ${reply.status}`);
          bytes = reply.bytes;
        });
        return { millis, wireBytes: bytes };
      };
      const chainRuns = [];
      const directRuns = [];
      for (let i = 0; i < STREAM_ROUNDS; i++) {
        chainRuns.push(await stream(`${sandbox}/exec/stream`, auth));
        directRuns.push(await stream(`${direct}/api/execute/stream`, directAuth));
      }
      const best = (runs: { millis: number }[]) => Math.min(...runs.map((r) => r.millis));
      const median = (runs: { millis: number }[]) => percentile(runs.map((r) => r.millis).sort((a, b) => a - b), 50);
      const chainMbps = mbps(STREAM_BYTES, median(chainRuns));
      const directMbps = mbps(STREAM_BYTES, median(directRuns));

      return [
        {
          title: `Chain vs direct: exec round trip (${EXEC_ROUNDS} × \`true\`, keep-alive, sequential)`,
          baselineLabel: "container server directly",
          rows: [
            { metric: "exec median", ours: ms(chainMedian), baseline: ms(directMedian), target: "≤ baseline + platform hop", met: chainMedian - directMedian <= platformHop + 0.5 },
            { metric: "exec p99", ours: ms(percentile(chainTimes, 99)), baseline: ms(percentile(directTimes, 99)) },
            { metric: "added by the chain (median)", ours: ms(chainMedian - directMedian), baseline: "—", target: "≤ ~8 ms", met: chainMedian - directMedian <= 8 },
            { metric: "platform hop: wrangler dev → Worker (median)", ours: ms(percentile(workerTimes, 50)), baseline: "—" },
            { metric: "platform hop: → Worker → Durable Object RPC (median)", ours: ms(platformHop), baseline: "—" },
          ],
          notes: [
            "Platform hops are measured in the same run: GET /health (answered by the Worker alone) and GET /v1/sandboxes/:id (one RPC to the Durable Object, no container call).",
          ],
        },
        {
          title: `Chain vs direct: streamed exec output (${STREAM_BYTES / (1024 * 1024)} MiB of stdout as SSE, median of ${STREAM_ROUNDS})`,
          baselineLabel: "container server directly",
          rows: [
            { metric: "throughput (stdout bytes)", ours: `${chainMbps.toFixed(0)} MiB/s`, baseline: `${directMbps.toFixed(0)} MiB/s`, target: "≥ 100 MB/s", met: chainMbps * 1.048576 >= 100 },
            { metric: "best run", ours: `${mbps(STREAM_BYTES, best(chainRuns)).toFixed(0)} MiB/s`, baseline: `${mbps(STREAM_BYTES, best(directRuns)).toFixed(0)} MiB/s` },
            { metric: "SSE bytes on the wire", ours: `${(chainRuns[0]!.wireBytes / 1048576).toFixed(0)} MiB`, baseline: `${(directRuns[0]!.wireBytes / 1048576).toFixed(0)} MiB` },
          ],
          notes: ["Chain: client → wrangler dev → Worker → Durable Object (RPC stream) → container server; the same server is the baseline."],
        },
      ];
    } finally {
      await stack.close();
    }
  },
};

export default bench;
