/**
 * Charts as data at the container server, with real CPython and Debian's matplotlib: every chart
 * kind read from a figure's artists beside its PNG, several axes in one figure, date and log axes,
 * axes with nothing to chart, and readings that fail without costing the cell its PNG or its state.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHART_DATA_ENV, chartSchema, type Chart } from "../../protocol/code-chart.ts";
import type { CodeContext, Execution, Result } from "../../protocol/code.ts";
import { checkedChart } from "../../container/interpreter/driver-chart.ts";
import { createContext, pngSize, run } from "./code-helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let sandbox: SandboxServer;
let context: CodeContext;

beforeAll(async () => {
  sandbox = await startSandbox();
  context = await createContext(sandbox, { language: "python" });
  await run(sandbox, context.id, "import matplotlib.pyplot as plt\nimport numpy as np");
});
afterAll(() => sandbox.close());

/** The run's one figure result: a PNG, and the chart, which must fit the wire schema exactly. */
function figureOf(execution: Execution): { result: Result; chart: Chart } {
  expect(execution.error).toBeUndefined();
  expect(execution.results).toHaveLength(1);
  const result = execution.results[0]!;
  expect(pngSize(result.png!).bytes).toBeGreaterThan(1000);
  expect(chartSchema.parse(result.chart)).toEqual(result.chart);
  return { result, chart: result.chart! };
}

async function chartOf(code: string): Promise<Chart> {
  return figureOf(await run(sandbox, context.id, code)).chart;
}

describe("charts as data", () => {
  it("read a line chart: title, labels, units, scales, ticks and each line's points; reference lines left out", async () => {
    const chart = await chartOf(
      [
        "fig, ax = plt.subplots()",
        "ax.plot([1, 2, 3], [1, 4, 9], label='squares')",
        "ax.plot([1, 2, 3], [2, float('nan'), 3])",
        "ax.axhline(5, color='grey')",
        "ax.grid(True)",
        "ax.set_title('Growth'); ax.set_xlabel('time (s)'); ax.set_ylabel('speed [m/s]')",
        "plt.show()",
      ].join("\n"),
    );
    expect(chart).toMatchObject({
      type: "line",
      title: "Growth",
      x_label: "time (s)",
      x_unit: "s",
      y_label: "speed [m/s]",
      y_unit: "m/s",
      x_scale: "linear",
      y_scale: "linear",
      elements: [
        { kind: "line", label: "squares", points: [[1, 1], [2, 4], [3, 9]] },
        { kind: "line", label: "Line 2", points: [[1, 2], [2, null], [3, 3]] },
      ],
    });
    if (chart.type !== "line") throw new Error("not a line chart");
    expect(chart.elements).toHaveLength(2);
    expect(chart.x_ticks.length).toBe(chart.x_tick_labels.length);
    expect(chart.y_ticks).toContain(4);
    expect(chart.y_tick_labels[chart.y_ticks.indexOf(4)]).toMatch(/^4(\.0+)?$/);
  });

  it("read scatter plots, marker-only lines among them", async () => {
    const chart = await chartOf("fig, ax = plt.subplots()\nax.scatter([1, 2], [3, 4], label='measured')\nax.plot([5, 6], [7, 8], 'o')\nfig");
    expect(chart).toMatchObject({
      type: "scatter",
      elements: [
        { kind: "scatter", label: "Series 1", points: [[5, 7], [6, 8]] },
        { kind: "scatter", label: "measured", points: [[1, 3], [2, 4]] },
      ],
    });
  });

  it("read bars: categories, groups, stacked bases and error bars, vertical and horizontal", async () => {
    const stacked = await chartOf(
      [
        "fig, ax = plt.subplots()",
        "ax.bar(['a', 'b'], [1, 2], label='first', yerr=[0.1, 0.2])",
        "ax.bar(['a', 'b'], [3, 4], bottom=[1, 2])",
        "ax.set_ylabel('count')",
        "fig",
      ].join("\n"),
    );
    expect(stacked).toMatchObject({ type: "bar", orientation: "vertical", x_scale: "categorical", x_ticks: ["a", "b"], y_label: "count" });
    expect(stacked.elements).toEqual([
      { label: "a", group: "first", value: 1, position: "a", width: 0.8, base: 0, error: [0.9, 1.1] },
      { label: "b", group: "first", value: 2, position: "b", width: 0.8, base: 0, error: [1.8, 2.2] },
      { label: "a", group: "Group 2", value: 3, position: "a", width: 0.8, base: 1 },
      { label: "b", group: "Group 2", value: 4, position: "b", width: 0.8, base: 2 },
    ]);

    const horizontal = await chartOf("fig, ax = plt.subplots()\nax.barh(['north', 'south'], [5, 6], label='sales')\nfig");
    expect(horizontal).toMatchObject({ type: "bar", orientation: "horizontal", y_scale: "categorical", x_scale: "linear" });
    expect(horizontal.elements).toEqual([
      { label: "north", group: "sales", value: 5, position: "north", width: 0.8, base: 0 },
      { label: "south", group: "sales", value: 6, position: "south", width: 0.8, base: 0 },
    ]);

    const grouped = await chartOf(
      "fig, ax = plt.subplots()\nx = np.arange(2)\nax.bar(x - 0.2, [1, 2], 0.4, label='2023')\nax.bar(x + 0.2, [3, 4], 0.4, label='2024')\nax.set_xticks(x, ['Q1', 'Q2'])\nfig",
    );
    if (grouped.type !== "bar") throw new Error("not a bar chart");
    expect(grouped.elements.map((bar) => `${bar.group}:${bar.label}`)).toEqual(["2023:Q1", "2023:Q2", "2024:Q1", "2024:Q2"]);
  });

  it("read a histogram as bars with its bins", async () => {
    const chart = await chartOf("fig, ax = plt.subplots()\nax.hist([1, 2, 2, 3, 3, 3], bins=[1, 2, 3, 4])\nfig");
    expect(chart).toMatchObject({ type: "bar", orientation: "vertical", x_scale: "linear" });
    expect(chart.elements).toEqual([
      { label: "1.5", group: "Group 1", value: 1, position: 1.5, width: 1, base: 0 },
      { label: "2.5", group: "Group 1", value: 2, position: 2.5, width: 1, base: 0 },
      { label: "3.5", group: "Group 1", value: 3, position: 3.5, width: 1, base: 0 },
    ]);
  });

  it("read a pie's wedges", async () => {
    const chart = await chartOf("fig, ax = plt.subplots()\nax.pie([1, 1, 2], labels=['cats', 'dogs', 'fish'])\nax.set_title('Pets')\nfig");
    expect(chart).toMatchObject({ type: "pie", title: "Pets" });
    if (chart.type !== "pie") throw new Error("not a pie");
    expect(chart.elements.map((wedge) => [wedge.label, Math.round(wedge.angle), Math.round(wedge.fraction * 100), wedge.radius])).toEqual([
      ["cats", 90, 25, 1],
      ["dogs", 90, 25, 1],
      ["fish", 180, 50, 1],
    ]);
  });

  it("read box-and-whisker plots from their lines or patches, with outliers and means", async () => {
    const vertical = await chartOf("fig, ax = plt.subplots()\nax.boxplot([[1, 2, 3, 4, 5, 40], [2, 3, 4]], labels=['A', 'B'], showmeans=True)\nfig");
    expect(vertical).toMatchObject({ type: "box_and_whisker", orientation: "vertical" });
    expect(vertical.elements).toEqual([
      { label: "A", position: 1, min: 1, first_quartile: 2.25, median: 3.5, third_quartile: 4.75, max: 5, outliers: [40], mean: 55 / 6 },
      { label: "B", position: 2, min: 2, first_quartile: 2.5, median: 3, third_quartile: 3.5, max: 4, outliers: [], mean: 3 },
    ]);

    const horizontal = await chartOf("fig, ax = plt.subplots()\nax.boxplot([[1, 2, 3, 4, 5, 40]], vert=False, patch_artist=True, notch=True)\nfig");
    expect(horizontal).toMatchObject({
      type: "box_and_whisker",
      orientation: "horizontal",
      elements: [{ label: "1", position: 1, min: 1, first_quartile: 2.25, median: 3.5, third_quartile: 4.75, max: 5, outliers: [40] }],
    });
  });

  it("read areas and error bars as parts of a line chart", async () => {
    const chart = await chartOf(
      [
        "fig, ax = plt.subplots()",
        "ax.fill_between([0, 1, 2], [1, 2, 3], [0, 0.5, 1], label='band')",
        "ax.stackplot([0, 1, 2], [1, 1, 1])",
        "ax.errorbar([0, 2], [2, 3], yerr=[0.5, 1], fmt='-o', label='fit')",
        "fig",
      ].join("\n"),
    );
    expect(chart.type).toBe("line");
    expect(chart.elements).toEqual([
      { kind: "line", label: "fit", points: [[0, 2], [2, 3]], y_errors: [[1.5, 2.5], [2, 4]] },
      { kind: "area", label: "band", points: [[0, 1], [1, 2], [2, 3]], baseline: [[0, 0], [1, 0.5], [2, 1]] },
      { kind: "area", label: "Area 2", points: [[0, 1], [1, 1], [2, 1]], baseline: [[0, 0], [1, 0], [2, 0]] },
    ]);
  });

  it("read several axes in one figure as a superchart, twin axes too, colorbars left out", async () => {
    const chart = await chartOf(
      [
        "fig, (left, middle, right) = plt.subplots(1, 3, figsize=(9, 3))",
        "left.plot([1, 2], [3, 4]); left.set_title('trend')",
        "middle.bar(['x'], [2])",
        "right.pie([1, 3])",
        "fig.suptitle('Report')",
        "fig",
      ].join("\n"),
    );
    expect(chart).toMatchObject({
      type: "superchart",
      title: "Report",
      elements: [
        { type: "line", title: "trend", elements: [{ kind: "line", label: "Line 1", points: [[1, 3], [2, 4]] }] },
        { type: "bar", title: null, elements: [{ label: "x", value: 2 }] },
        { type: "pie", title: null, elements: [{ label: "Slice 1" }, { label: "Slice 2" }] },
      ],
    });

    const twin = await chartOf("fig, ax = plt.subplots()\nax.plot([1, 2], [3, 4])\nax.twinx().bar([1, 2], [30, 40])\nfig");
    expect(twin).toMatchObject({ type: "superchart", elements: [{ type: "line" }, { type: "bar", elements: [{ value: 30 }, { value: 40 }] }] });

    const colorbar = await chartOf("fig, ax = plt.subplots()\nplt.colorbar(ax.scatter([1, 2], [3, 4], c=[1, 2]))\nfig");
    expect(colorbar).toMatchObject({ type: "scatter", elements: [{ points: [[1, 3], [2, 4]] }] });
  });

  it("give dates as ISO strings on a date axis, pandas' time series included", async () => {
    const chart = await chartOf("import datetime\nfig, ax = plt.subplots()\nax.plot([datetime.date(2024, 1, 1), datetime.date(2024, 3, 1)], [1, 2])\nfig");
    expect(chart).toMatchObject({ type: "line", x_scale: "datetime", y_scale: "linear" });
    if (chart.type !== "line") throw new Error("not a line chart");
    expect(chart.elements[0]!.points).toEqual([
      ["2024-01-01T00:00:00+00:00", 1],
      ["2024-03-01T00:00:00+00:00", 2],
    ]);
    expect(chart.x_ticks.every((tick) => typeof tick === "string" && !Number.isNaN(Date.parse(tick)))).toBe(true);

    const series = await chartOf("import pandas as pd\nfig, ax = plt.subplots()\npd.Series([1, 3], index=pd.date_range('2024-05-01', periods=2)).plot(ax=ax)\nfig");
    expect(series).toMatchObject({ type: "line", x_scale: "datetime", elements: [{ points: [["2024-05-01T00:00:00", 1], ["2024-05-02T00:00:00", 3]] }] });
  });

  it("report log scales", async () => {
    const chart = await chartOf("fig, ax = plt.subplots()\nax.plot([1, 10, 100], [5, 50, 500])\nax.set_xscale('log'); ax.set_yscale('symlog')\nfig");
    expect(chart).toMatchObject({ type: "line", x_scale: "log", y_scale: "symlog", elements: [{ points: [[1, 5], [10, 50], [100, 500]] }] });
    if (chart.type !== "line") throw new Error("not a line chart");
    expect(chart.x_tick_labels).toContain("10^{1}");
  });

  it("say why an axes is not charted: no data, an image, bars and lines together", async () => {
    expect(await chartOf("fig, ax = plt.subplots()\nax.set_title('Nothing yet')\nfig")).toEqual({ type: "unknown", title: "Nothing yet", elements: [], reason: "the axes has no data" });
    expect(await chartOf("fig, ax = plt.subplots()\nax.imshow(np.zeros((4, 4)))\nfig")).toMatchObject({ type: "unknown", reason: expect.stringContaining("images") });
    expect(await chartOf("fig, ax = plt.subplots()\nax.bar([1, 2], [3, 4])\nax.plot([1, 2], [3, 4])\nfig")).toMatchObject({ type: "unknown", reason: expect.stringContaining("bars and lines") });
    expect(await chartOf("fig, ax = plt.subplots()\nax.violinplot([[1, 2, 3, 4, 5]])\nfig")).toMatchObject({ type: "unknown", reason: expect.stringContaining("PolyCollection") });
    expect(await chartOf("fig = plt.figure()\nfig.add_subplot(projection='polar').plot([0, 1], [1, 2])\nfig")).toMatchObject({ type: "unknown", reason: "polar axes are not charted" });
    // A figure without axes has nothing to chart: its PNG alone.
    const bare = await run(sandbox, context.id, "plt.figure(figsize=(2, 2))\nplt.show()");
    expect(bare.results).toHaveLength(1);
    expect(bare.results[0]!.png).toBeDefined();
    expect(bare.results[0]!.chart).toBeUndefined();
  });

  it("survive a reading that fails: the PNG stays, the chart says unknown, the cell and its context go on", async () => {
    const execution = await run(
      sandbox,
      context.id,
      [
        "from matplotlib.lines import Line2D",
        "class Unreadable(Line2D):",
        "    def get_xydata(self):",
        "        raise RuntimeError('no data for you')",
        "fig, ax = plt.subplots()",
        "ax.add_line(Unreadable([0, 1], [0, 1]))",
        "ax.set_title('broken')",
        "plt.show()",
        "print('after the figure')",
      ].join("\n"),
    );
    const { chart } = figureOf(execution);
    expect(chart).toEqual({ type: "unknown", title: "broken", elements: [], reason: "reading the axes failed: RuntimeError: no data for you" });
    expect(execution.logs.stdout.join("")).toBe("after the figure\n");
    expect(execution.logs.stderr).toEqual([]);
    expect((await run(sandbox, context.id, "1 + 1")).results[0]!.text).toBe("2");
  });

  it("come with display(fig) and a figure as the cell's value, and not at all when chart data is off", async () => {
    const displayed = await run(sandbox, context.id, "fig, ax = plt.subplots()\nax.plot([1, 2])\ndisplay(fig)\nplt.close(fig)");
    expect(displayed.results[0]).toMatchObject({ isMainResult: false, chart: { type: "line" } });
    const value = await run(sandbox, context.id, "fig, ax = plt.subplots()\nax.plot([1, 2])\nplt.close(fig)\nfig");
    expect(value.results[0]).toMatchObject({ isMainResult: true, chart: { type: "line" } });

    const off = await run(sandbox, context.id, "fig, ax = plt.subplots()\nax.plot([1, 2])\nplt.show()", { env: { [CHART_DATA_ENV]: "off" } });
    expect(off.results).toHaveLength(1);
    expect(off.results[0]!.png).toBeDefined();
    expect(off.results[0]!.chart).toBeUndefined();
  });

  it("send no more than a bounded number of points: a huge line is charted as unknown", async () => {
    const chart = await chartOf("fig, ax = plt.subplots()\nax.plot(np.arange(300_000), np.arange(300_000))\nfig");
    expect(chart).toMatchObject({ type: "unknown", reason: expect.stringContaining("too many") });
  });
});

describe("a chart that does not fit the schema", () => {
  it("is replaced by an unknown chart saying where it went wrong", () => {
    expect(checkedChart({ type: "line", title: "t", elements: "nope" })).toMatchObject({ type: "unknown", title: "t", elements: [], reason: expect.stringContaining("did not fit the schema") });
    expect(checkedChart("not a chart")).toMatchObject({ type: "unknown", title: null });
    const good = { type: "pie", title: null, elements: [{ label: "a", angle: 360, fraction: 1, radius: 1 }] };
    expect(checkedChart(good)).toEqual(good);
  });
});
