/**
 * The code interpreter: a warm `runCode("1+1")` round trip beside running the same thing the old way
 * (exec of `python3 -c "print(1+1)"`, a fresh interpreter per call), at the container server and
 * through the whole chain; how long a context takes to start (Python, JavaScript); and a matplotlib
 * figure (800×600) from code to PNG result.
 *
 * The spawned Python is /usr/bin/python3, the interpreter contexts run: a `python3` found first on
 * PATH may be a wrapper script (pyenv) that would make the baseline look worse than it is.
 */
import { send, startStack } from "./chain-stack.ts";
import { median, ms, nowMs, percentile, postJson, startServerProcess } from "./support.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const WARMUP = 30;
const RUNS = 300;
const CHAIN_RUNS = 150;
const CONTEXT_STARTS = 12;
const FIGURES = 12;
const SPAWN = `/usr/bin/python3 -c "print(1+1)"`;
const FIGURE_CODE = [
  "import matplotlib.pyplot as plt",
  "fig = plt.figure(figsize=(8, 6), dpi=100)",
  "plt.plot(range(100), [i * i for i in range(100)])",
  "plt.title('bench')",
  "plt.show()",
].join("\n");

interface Execution {
  results: { text?: string; png?: string }[];
  error?: { name: string; value: string };
}

async function timed<T>(work: () => Promise<T>): Promise<number> {
  const t0 = nowMs();
  await work();
  return nowMs() - t0;
}

function check(execution: Execution, expected: string): void {
  if (execution.error || execution.results[0]?.text !== expected) throw new Error(`unexpected run: ${JSON.stringify(execution).slice(0, 300)}`);
}

async function containerTables(): Promise<BenchTable[]> {
  const server = await startServerProcess();
  try {
    const { context } = await postJson<{ context: { id: string } }>(server.url, "/api/code/contexts", { language: "python" });
    const runCode = async () => check(await postJson<Execution>(server.url, "/api/code/run", { code: "1+1", contextId: context.id }), "2");
    const spawn = async () => {
      const result = await postJson<{ stdout: string }>(server.url, "/api/execute", { command: SPAWN });
      if (result.stdout !== "2\n") throw new Error(`unexpected exec: ${JSON.stringify(result)}`);
    };
    for (let i = 0; i < WARMUP; i++) {
      await runCode();
      await spawn();
    }
    const ours: number[] = [];
    const spawned: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      ours.push(await timed(runCode));
      spawned.push(await timed(spawn));
    }

    const starts: Record<"python" | "javascript", number[]> = { python: [], javascript: [] };
    for (let i = 0; i < CONTEXT_STARTS; i++) {
      for (const language of ["python", "javascript"] as const) {
        let id = "";
        starts[language].push(await timed(async () => (id = (await postJson<{ context: { id: string } }>(server.url, "/api/code/contexts", { language })).context.id)));
        await send(`${server.url}/api/code/contexts/${id}`, "DELETE", undefined);
      }
    }

    let firstFigure = 0;
    const figures: number[] = [];
    let pngBytes = 0;
    for (let i = 0; i <= FIGURES; i++) {
      const took = await timed(async () => {
        const execution = await postJson<Execution>(server.url, "/api/code/run", { code: FIGURE_CODE, contextId: context.id });
        const png = execution.results[0]?.png;
        if (execution.error || !png) throw new Error(`no figure: ${JSON.stringify(execution).slice(0, 300)}`);
        pngBytes = Buffer.from(png, "base64").length;
      });
      if (i === 0) firstFigure = took;
      else figures.push(took);
    }

    const warm = median(ours);
    const spawn1 = median(spawned);
    return [
      {
        title: `Code interpreter at the container server: warm \`runCode("1+1")\` (${RUNS} runs, HTTP keep-alive)`,
        baselineLabel: `exec \`${SPAWN}\`, same server, same run`,
        rows: [
          { metric: "median", ours: ms(warm), baseline: ms(spawn1), target: "≤ 3 ms, ≥ 10× faster than the spawn", met: warm <= 3 && spawn1 / warm >= 10 },
          { metric: "p99", ours: ms(percentile(ours, 99)), baseline: ms(percentile(spawned, 99)) },
          { metric: "speed-up (median)", ours: `${(spawn1 / warm).toFixed(1)}×`, baseline: "1×" },
        ],
        notes: ["Ours keeps one Python interpreter per context and sends it each cell over a pipe; the baseline starts a Python per call (the way code ran before contexts)."],
      },
      {
        title: `Code contexts: start-up and a matplotlib figure (median of ${CONTEXT_STARTS} starts, ${FIGURES} figures)`,
        baselineLabel: "exec of one Python, for scale",
        rows: [
          { metric: "create a Python context (interpreter ready)", ours: ms(median(starts.python)), baseline: ms(spawn1) },
          { metric: "create a JavaScript context (interpreter ready)", ours: ms(median(starts.javascript)), baseline: "—" },
          { metric: "800×600 figure → PNG result, warm", ours: ms(median(figures)), baseline: "—" },
          { metric: "first figure of a context (imports matplotlib)", ours: ms(firstFigure), baseline: "—" },
          { metric: "PNG size", ours: `${(pngBytes / 1024).toFixed(1)} KiB`, baseline: "—" },
        ],
      },
    ];
  } finally {
    await server.close();
  }
}

async function chainTable(): Promise<BenchTable> {
  const stack = await startStack();
  try {
    const sandbox = `${stack.url}/v1/sandboxes/bench-code`;
    const auth = { authorization: `Bearer ${stack.token}` };
    const created = await send(`${sandbox}/code/contexts`, "POST", { language: "python" }, auth);
    if (created.status !== 201) throw new Error(`context failed: ${created.status} ${created.body}`);
    const contextId = (JSON.parse(created.body) as { context: { id: string } }).context.id;
    const runCode = async () => {
      const reply = await send(`${sandbox}/code/run`, "POST", { code: "1+1", contextId }, auth);
      check(JSON.parse(reply.body) as Execution, "2");
    };
    const spawn = async () => {
      const reply = await send(`${sandbox}/exec`, "POST", { command: SPAWN }, auth);
      if ((JSON.parse(reply.body) as { stdout: string }).stdout !== "2\n") throw new Error(`unexpected exec: ${reply.body}`);
    };
    for (let i = 0; i < WARMUP; i++) {
      await runCode();
      await spawn();
    }
    const ours: number[] = [];
    const spawned: number[] = [];
    for (let i = 0; i < CHAIN_RUNS; i++) {
      ours.push(await timed(runCode));
      spawned.push(await timed(spawn));
    }
    const warm = median(ours);
    const spawn1 = median(spawned);
    return {
      title: `Code interpreter through the chain: warm \`runCode("1+1")\` (${CHAIN_RUNS} runs, /v1 over wrangler dev)`,
      baselineLabel: `exec \`${SPAWN}\` through the same chain`,
      rows: [
        { metric: "median", ours: ms(warm), baseline: ms(spawn1), target: "faster than the spawn", met: warm < spawn1 },
        { metric: "p99", ours: ms(percentile(ours, 99)), baseline: ms(percentile(spawned, 99)) },
        { metric: "speed-up (median)", ours: `${(spawn1 / warm).toFixed(1)}×`, baseline: "1×" },
      ],
      notes: ["Chain: client → wrangler dev → Worker → Durable Object (RPC) → container server; each hop costs the same for both columns."],
    };
  } finally {
    await stack.close();
  }
}

const bench: BenchModule = {
  name: "code-interpreter",
  async run() {
    return [...(await containerTables()), await chainTable()];
  },
};

export default bench;
