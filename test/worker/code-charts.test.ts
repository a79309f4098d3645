/**
 * Charts as data through the whole chain: a figure's chart arrives beside its PNG, unchanged, over
 * Workers RPC (buffered and streamed to onResult) and over /v1, from the local runtime's real
 * container servers and Debian's matplotlib.
 */
import { afterAll, describe, expect, it } from "vitest";
import { chartSchema, type Chart } from "../../protocol/code-chart.ts";
import type { CodeEvent, Execution, Result } from "../../protocol/code.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { apiCall, sandboxPool, uniqueId } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

const FIGURE = [
  "import matplotlib.pyplot as plt",
  "fig, (bars, trend) = plt.subplots(1, 2)",
  "bars.bar(['north', 'south'], [3, 5], label='sales')",
  "trend.plot([1, 2, 3], [2, 4, 8], label='growth')",
  "trend.set_yscale('log')",
  "fig.suptitle('Quarter')",
  "plt.show()",
].join("\n");

const EXPECTED = {
  type: "superchart",
  title: "Quarter",
  elements: [
    {
      type: "bar",
      orientation: "vertical",
      x_scale: "categorical",
      elements: [
        { label: "north", group: "sales", value: 3, position: "north", width: 0.8, base: 0 },
        { label: "south", group: "sales", value: 5, position: "south", width: 0.8, base: 0 },
      ],
    },
    { type: "line", y_scale: "log", elements: [{ kind: "line", label: "growth", points: [[1, 2], [2, 4], [3, 8]] }] },
  ],
};

function chartOf(result: Result | undefined): Chart {
  expect(atob(result!.png!).slice(1, 4)).toBe("PNG");
  return chartSchema.parse(result!.chart);
}

describe("charts as data through the chain", () => {
  it("come with the figure over Workers RPC, buffered and to onResult as the cell runs", async () => {
    const sandbox = sandboxes.create("code-charts");
    const buffered = await sandbox.runCode(FIGURE);
    expect(buffered.error).toBeUndefined();
    expect(chartOf(buffered.results[0])).toMatchObject(EXPECTED);

    const seen: Result[] = [];
    const streamed = await sandbox.runCode(FIGURE, { onResult: (result) => seen.push(result) });
    expect(seen).toHaveLength(1);
    expect(chartOf(seen[0])).toMatchObject(EXPECTED);
    expect(streamed.results[0]!.chart).toEqual(seen[0]!.chart);
  });

  it("come with the figure over /v1, buffered and streamed", async () => {
    const base = `/v1/sandboxes/${uniqueId("code-charts-v1")}`;
    try {
      const reply = await apiCall(`${base}/code/run`, { method: "POST", json: { code: FIGURE } });
      expect(reply.status).toBe(200);
      const execution = (await reply.json()) as Execution;
      expect(chartOf(execution.results[0])).toMatchObject(EXPECTED);

      const stream = await apiCall(`${base}/code/run/stream`, { method: "POST", json: { code: FIGURE } });
      const results: Result[] = [];
      for await (const event of readEventStream<CodeEvent>(stream.body!)) if (event.type === "result") results.push(event.result);
      expect(results).toHaveLength(1);
      expect(results[0]!.chart).toEqual(execution.results[0]!.chart);
    } finally {
      await apiCall(base, { method: "DELETE" });
    }
  });
});
