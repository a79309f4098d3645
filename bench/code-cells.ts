/**
 * What a code cell costs beyond its own work, at the container server: reading a figure's chart
 * data (a 10-series line chart drawn with and without it, alternately, in one context), and how
 * long an interrupt takes to end a running cell (from the interrupt request to the run's
 * `complete` event), in Python and in JavaScript, beside SIGINT to a plain Python process (from the
 * signal request to its final status).
 */
import type { CodeEvent, Execution } from "../protocol/code.ts";
import { CHART_DATA_ENV } from "../protocol/code-chart.ts";
import { CODE_ROUTES } from "../protocol/code.ts";
import type { LogEvent } from "../protocol/events.ts";
import { PROCESS_ROUTES, TERMINAL_STATUSES } from "../protocol/process.ts";
import { readEventStream } from "../protocol/sse.ts";
import { median, ms, nowMs, percentile, postJson, startServerProcess } from "./support.ts";
import type { BenchModule, BenchTable } from "./types.ts";

const FIGURES = 15;
const INTERRUPTS = 15;
const SERIES = 10;
const POINTS = 200;
const CHART_CODE = [
  "import matplotlib.pyplot as plt, numpy as np",
  "fig, ax = plt.subplots(figsize=(8, 6), dpi=100)",
  `x = np.arange(${POINTS})`,
  `for k in range(${SERIES}):`,
  "    ax.plot(x, np.sin(x / 10 + k) * (k + 1), label=f'series {k}')",
  "ax.set_title('ten series'); ax.set_xlabel('t (s)'); ax.legend()",
  "plt.show()",
].join("\n");

/** Cells that run until interrupted, after saying they are running. */
const LONG_CELLS = {
  python: "import time\nprint('running', flush=True)\ntime.sleep(60)",
  javascript: "console.log('running');\nfor (;;) {}",
} as const;
const LONG_PROCESS = `/usr/bin/python3 -c "import time; print('running', flush=True); time.sleep(60)"`;

async function openStream<T>(url: string, init: RequestInit): Promise<AsyncGenerator<T>> {
  const response = await fetch(url, init);
  if (!response.ok || !response.body) throw new Error(`stream failed: ${response.status} ${await response.text()}`);
  return readEventStream<T>(response.body);
}

async function chartCost(url: string): Promise<BenchTable> {
  const { context } = await postJson<{ context: { id: string } }>(url, CODE_ROUTES.contexts, { language: "python" });
  const draw = async (chartData: boolean) => {
    const t0 = nowMs();
    const execution = await postJson<Execution>(url, CODE_ROUTES.run, { code: CHART_CODE, contextId: context.id, env: { [CHART_DATA_ENV]: chartData ? "on" : "off" } });
    const took = nowMs() - t0;
    const result = execution.results[0];
    if (execution.error || !result?.png || (result.chart !== undefined) !== chartData) throw new Error(`unexpected figure: ${JSON.stringify(execution).slice(0, 300)}`);
    if (chartData && (result.chart?.type !== "line" || result.chart.elements.length !== SERIES)) throw new Error(`unexpected chart: ${JSON.stringify(result.chart).slice(0, 300)}`);
    return { took, chartBytes: chartData ? Buffer.byteLength(JSON.stringify(result.chart)) : 0 };
  };
  await draw(true); // imports matplotlib and compiles the chart reader
  await draw(false);
  const withChart: number[] = [];
  const without: number[] = [];
  let chartBytes = 0;
  for (let i = 0; i < FIGURES; i++) {
    const drawn = await draw(true);
    withChart.push(drawn.took);
    chartBytes = drawn.chartBytes;
    without.push((await draw(false)).took);
  }
  const added = median(withChart) - median(without);
  return {
    title: `Chart data: a ${SERIES}-series line chart (${POINTS} points each, 800×600) drawn with and without it (median of ${FIGURES} each, alternating, one context)`,
    baselineLabel: `the same cell with \`${CHART_DATA_ENV}=off\` (PNG only)`,
    rows: [
      { metric: "cell → result (PNG and chart)", ours: ms(median(withChart)), baseline: ms(median(without)) },
      { metric: "chart data's cost", ours: ms(added), baseline: "—", target: "≤ 10% of the cell", met: added <= median(without) * 0.1 },
      { metric: "chart JSON size", ours: `${(chartBytes / 1024).toFixed(1)} KiB`, baseline: "—" },
    ],
  };
}

/** Milliseconds from the interrupt request to the run's `complete`, for one cell. */
async function interruptCell(url: string, contextId: string, code: string): Promise<number> {
  const events = await openStream<CodeEvent>(url + CODE_ROUTES.runStream, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code, contextId }),
  });
  let executionId = "";
  let asked = 0;
  for await (const event of events) {
    if (event.type === "start") executionId = event.executionId;
    if (event.type === "stdout" && asked === 0) {
      asked = nowMs();
      const answer = await postJson<{ interrupted: boolean }>(url, CODE_ROUTES.interrupt(executionId), {});
      if (!answer.interrupted) throw new Error("the run was not interrupted");
    }
    if (event.type === "complete") {
      if (!event.interrupted || event.contextRestarted) throw new Error(`unexpected end: ${JSON.stringify(event)}`);
      return nowMs() - asked;
    }
  }
  throw new Error("the run's stream ended without complete");
}

/** Milliseconds from SIGINT's request to a plain Python process's final status. */
async function interruptProcess(url: string, processId: string): Promise<number> {
  await postJson(url, PROCESS_ROUTES.start, { command: LONG_PROCESS, options: { processId } });
  const events = await openStream<LogEvent>(url + PROCESS_ROUTES.stream(processId), {});
  let asked = 0;
  for await (const event of events) {
    if (event.type === "stdout" && asked === 0) {
      asked = nowMs();
      const response = await fetch(`${url}${PROCESS_ROUTES.one(processId)}?signal=SIGINT`, { method: "DELETE" });
      if (!response.ok) throw new Error(`signal failed: ${response.status}`);
    }
    if (event.type === "status" && asked > 0 && TERMINAL_STATUSES.includes(event.status)) return nowMs() - asked;
  }
  throw new Error("the process's stream ended without a final status");
}

async function interrupts(url: string): Promise<BenchTable> {
  const taken: Record<keyof typeof LONG_CELLS, number[]> = { python: [], javascript: [] };
  const contexts: Record<string, string> = {};
  for (const language of Object.keys(LONG_CELLS) as (keyof typeof LONG_CELLS)[]) {
    contexts[language] = (await postJson<{ context: { id: string } }>(url, CODE_ROUTES.contexts, { language })).context.id;
  }
  const processes: number[] = [];
  for (let i = 0; i < INTERRUPTS; i++) {
    for (const language of Object.keys(LONG_CELLS) as (keyof typeof LONG_CELLS)[]) taken[language].push(await interruptCell(url, contexts[language]!, LONG_CELLS[language]));
    processes.push(await interruptProcess(url, `bench-interrupt-${i}`));
  }
  const baseline = median(processes);
  return {
    title: `Interrupt latency at the container server: from the interrupt request to the cell's end (median of ${INTERRUPTS})`,
    baselineLabel: "SIGINT to a plain Python process (`time.sleep`), request → final status, same run",
    rows: [
      { metric: "Python cell in `time.sleep(60)`", ours: ms(median(taken.python)), baseline: ms(baseline), target: "≤ 100 ms", met: median(taken.python) <= 100 },
      { metric: "… p95", ours: ms(percentile(taken.python, 95)), baseline: ms(percentile(processes, 95)) },
      { metric: "JavaScript cell in a busy `for (;;) {}`", ours: ms(median(taken.javascript)), baseline: ms(baseline), target: "≤ 250 ms", met: median(taken.javascript) <= 250 },
      { metric: "… p95", ours: ms(percentile(taken.javascript, 95)), baseline: ms(percentile(processes, 95)) },
    ],
    notes: ["Every sample checks that the interrupt stopped the cell without restarting its interpreter."],
  };
}

const bench: BenchModule = {
  name: "code-cells",
  async run() {
    const server = await startServerProcess();
    try {
      return [await chartCost(server.url), await interrupts(server.url)];
    } finally {
      await server.close();
    }
  },
};

export default bench;
