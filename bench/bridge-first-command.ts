/**
 * Time to first command, the way ComputeSDK's public benchmark measures a provider: create a sandbox,
 * run `node -v` in it, stop the clock. Through `@computesdk/cloudflare` (Cloudflare's Bridge API on
 * our Worker), beside the same two steps through our own /v1 API, in one run of `npm start`'s stack:
 * one sandbox after another, then a burst of sandboxes at once. Every sandbox is new, so every first
 * command includes starting its container; sandboxes are destroyed after the clock stops.
 */
import { cloudflare } from "@computesdk/cloudflare";
import { percentile, send, startStack, type Stack } from "./chain-stack.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const SEQUENTIAL = 12;
const BURST = 8;

const ms = (value: number) => `${value.toFixed(0)} ms`;

interface Path {
  /** Creates a sandbox and runs `node -v` in it; resolves with the sandbox id once the output is in. */
  firstCommand(): Promise<string>;
  destroy(id: string): Promise<void>;
}

function bridgePath(stack: Stack): Path {
  const provider = cloudflare({ sandboxUrl: stack.url, sandboxApiKey: stack.token });
  return {
    async firstCommand() {
      const sandbox = await provider.sandbox.create();
      const result = await sandbox.runCommand("node -v");
      if (result.exitCode !== 0 || !result.stdout.startsWith("v")) throw new Error(`node -v through the Bridge: ${JSON.stringify(result)}`);
      return sandbox.sandboxId;
    },
    destroy: (id) => provider.sandbox.destroy(id),
  };
}

function ownApiPath(stack: Stack): Path {
  const auth = { authorization: `Bearer ${stack.token}` };
  let counter = 0;
  const run = Math.random().toString(36).slice(2, 8);
  return {
    async firstCommand() {
      // A sandbox of our API is named by its caller: creating one is choosing an id.
      const id = `ttfc-${run}-${++counter}`;
      const reply = await send(`${stack.url}/v1/sandboxes/${id}/exec`, "POST", { command: "node -v" }, auth);
      const result = JSON.parse(reply.body) as { exitCode?: number; stdout?: string };
      if (reply.status !== 200 || result.exitCode !== 0 || !result.stdout?.startsWith("v")) throw new Error(`node -v through /v1: ${reply.status} ${reply.body}`);
      return id;
    },
    async destroy(id) {
      await send(`${stack.url}/v1/sandboxes/${id}`, "DELETE", undefined, auth);
    },
  };
}

async function timedFirstCommand(path: Path, created: string[]): Promise<number> {
  const start = performance.now();
  created.push(await path.firstCommand());
  return performance.now() - start;
}

const bench: BenchModule = {
  name: "bridge-first-command",
  async run(): Promise<BenchTable[]> {
    const stack = await startStack();
    try {
      const bridge = bridgePath(stack);
      const ours = ownApiPath(stack);
      const created = { bridge: [] as string[], ours: [] as string[] };
      // One of each first, so neither pays for the stack warming up.
      await timedFirstCommand(bridge, created.bridge);
      await timedFirstCommand(ours, created.ours);

      const sequential = { bridge: [] as number[], ours: [] as number[] };
      for (let i = 0; i < SEQUENTIAL; i++) {
        // Interleaved, so drift in machine load hits both alike.
        sequential.bridge.push(await timedFirstCommand(bridge, created.bridge));
        sequential.ours.push(await timedFirstCommand(ours, created.ours));
      }
      // The runtime keeps at most SANDBOX_MAX_SANDBOXES live: let the sequential ones go before the bursts.
      const destroyAll = async () => {
        await Promise.all([...created.bridge.map((id) => bridge.destroy(id)), ...created.ours.map((id) => ours.destroy(id))]);
        created.bridge.length = 0;
        created.ours.length = 0;
      };
      await destroyAll();
      const burst = async (path: Path, ids: string[]) => {
        const start = performance.now();
        const each = await Promise.all(Array.from({ length: BURST }, () => timedFirstCommand(path, ids)));
        return { wall: performance.now() - start, each: each.sort((a, b) => a - b) };
      };
      const burstBridge = await burst(bridge, created.bridge);
      const burstOurs = await burst(ours, created.ours);
      await destroyAll();

      for (const list of [sequential.bridge, sequential.ours]) list.sort((a, b) => a - b);
      return [
        {
          title: `Time to first command: new sandbox → \`node -v\` (${SEQUENTIAL} one after another, then a burst of ${BURST})`,
          baselineLabel: "our own /v1 API, same stack",
          rows: [
            {
              metric: "sequential, median",
              ours: ms(percentile(sequential.bridge, 50)),
              baseline: ms(percentile(sequential.ours, 50)),
              // The Bridge adds one round trip (POST /v1/sandbox) and an SSE reply.
              target: "≤ baseline + 50 ms",
              met: percentile(sequential.bridge, 50) - percentile(sequential.ours, 50) <= 50,
            },
            { metric: "sequential, p90", ours: ms(percentile(sequential.bridge, 90)), baseline: ms(percentile(sequential.ours, 90)) },
            { metric: "burst: median per sandbox", ours: ms(percentile(burstBridge.each, 50)), baseline: ms(percentile(burstOurs.each, 50)) },
            { metric: "burst: slowest sandbox", ours: ms(burstBridge.each.at(-1)!), baseline: ms(burstOurs.each.at(-1)!) },
            { metric: "burst: all done (wall)", ours: ms(burstBridge.wall), baseline: ms(burstOurs.wall) },
          ],
          notes: [
            "ours: @computesdk/cloudflare (remote mode) → Bridge API on our Worker: POST /v1/sandbox, then POST /v1/sandbox/:id/exec (SSE). " +
              "Baseline: POST /v1/sandboxes/:id/exec (buffered). Both through wrangler dev → Worker → Durable Object → local runtime, which starts a container server per sandbox.",
          ],
        },
      ];
    } finally {
      await stack.close();
    }
  },
};

export default bench;
