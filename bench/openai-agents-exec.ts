/**
 * What the OpenAI Agents adapter adds to a command: one command after another in a warm sandbox
 * (its container started), through `edge-sandbox/openai-agents` (`execCommand`, over the Bridge's
 * exec stream, and with a TTY, on a terminal of its own), beside the same command through our HTTP
 * client (`getHttpSandbox().exec`) in the same run, interleaved so drift in machine load hits both
 * alike. Sandboxes are containers (bwrap), where the SDK's `/workspace` paths mean what they mean in
 * production. (The AI SDK adapter's `run` is that same exec call, with nothing in between to measure.)
 */
import { Manifest } from "@openai/agents-core/sandbox";
import { EdgeSandboxClient } from "../src/adapters/openai-agents/index.ts";
import { getHttpSandbox } from "../src/client/http.ts";
import { percentile, startStack } from "./chain-stack.ts";
import type { BenchModule, BenchRow, BenchTable } from "./types.ts";

const ROUNDS = 30;
const COMMAND = "echo ok";

const ms = (value: number) => `${value.toFixed(1)} ms`;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** Median of `path` and of the baseline over ROUNDS interleaved rounds, after one unmeasured of each. */
async function compare(path: () => Promise<unknown>, baseline: () => Promise<unknown>): Promise<{ ours: number; base: number }> {
  await path();
  await baseline();
  const ours: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    ours.push(await timed(path));
    base.push(await timed(baseline));
  }
  const median = (samples: number[]) => percentile([...samples].sort((a, b) => a - b), 50);
  return { ours: median(ours), base: median(base) };
}

function row(metric: string, figures: { ours: number; base: number }, allowanceMs: number): BenchRow {
  return { metric, ours: ms(figures.ours), baseline: ms(figures.base), target: `≤ baseline + ${allowanceMs} ms`, met: figures.ours <= figures.base + allowanceMs };
}

const bench: BenchModule = {
  name: "openai-agents-exec",
  async run(): Promise<BenchTable[]> {
    const stack = await startStack({ SANDBOX_ISOLATION: "bwrap" });
    try {
      const openai = await new EdgeSandboxClient({ url: stack.url, token: stack.token }).create(new Manifest({ root: "/workspace" }));
      const openaiBaseline = getHttpSandbox(openai.state.sandboxId, { url: stack.url, token: stack.token });
      const exec = await compare(
        () => openai.execCommand({ cmd: COMMAND }),
        () => openaiBaseline.exec(COMMAND),
      );
      const tty = await compare(
        () => openai.execCommand({ cmd: COMMAND, tty: true }),
        () => openaiBaseline.exec(COMMAND),
      );
      await openai.close();
      return [
        {
          title: "A command through the OpenAI Agents adapter (warm sandbox, median)",
          baselineLabel: "the same command through getHttpSandbox().exec",
          rows: [
            // The Bridge's exec: an SSE stream, a login shell (`sh -lc`) and a `cd` per command.
            row("OpenAI Agents execCommand", exec, 30),
            // A terminal made, waited on and read: three calls, and a PTY.
            row("OpenAI Agents execCommand with a TTY", tty, 60),
          ],
          notes: [`${ROUNDS} rounds of \`${COMMAND}\` each, interleaved with the baseline; sandboxes under bwrap.`],
        },
      ];
    } finally {
      await stack.close();
    }
  },
};

export default bench;
