/**
 * The console's notebook in a real browser (Debian's chromium driven by puppeteer-core) against the
 * shared `npm start` stack: a cell's output shows while it still runs, a matplotlib figure, a
 * DataFrame as a table, a traceback; interrupt stops a runaway cell and the context keeps its state,
 * restart clears it; contexts in other languages, and one found gone replaced by the next run.
 * A cell's output is the sandbox's, so it is attacked: HTML, SVG, markdown, JavaScript and plain
 * output that try to run script with the page's token must run nothing in the console's origin.
 * Charts are drawn from hand-made chart data through the page's own result view. A cell's stream
 * cut mid-way (a proxy that breaks connections) resumes where it broke off. A screenshot goes to
 * test-output/notebook.png.
 */
import type { Browser, Page } from "puppeteer-core";
import { launchBrowser, openSandbox, OUTPUT_DIR } from "./browser.ts";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startCuttingProxy } from "../cutting-proxy.ts";
import { uniqueId } from "./helpers.ts";

const STEP_MS = 30_000;
/** A 1×1 PNG, for results whose image must decode. */
const DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

const url = inject("stackUrl");
const token = inject("stackToken");
const sandboxId = uniqueId("notebook");
let browser: Browser;
let page: Page;
/** Whatever the page reported as broken: uncaught errors, anything the CSP refused, failed loads. */
const problems: string[] = [];
/** Every URL the page asked for. */
const requested: string[] = [];

function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${url}/v1/sandboxes/${sandboxId}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
}

const cell = (index: number) => `#notebook-cells .cells > .cell:nth-child(${index + 1})`;

/** Puts code in the shown notebook's last cell and runs it with Shift+Enter (which adds a cell after it); its index. */
async function runCell(code: string): Promise<number> {
  const index = await page.$$eval("#notebook-cells .cells > .cell", (cells) => cells.length - 1);
  await page.evaluate(
    (selector: string, text: string) => {
      const editor = document.querySelector(`${selector} .cell-code`) as HTMLTextAreaElement;
      editor.value = text;
      editor.focus();
    },
    cell(index),
    code,
  );
  await page.keyboard.down("Shift");
  await page.keyboard.press("Enter");
  await page.keyboard.up("Shift");
  return index;
}

/** Waits until the cell's run is over; its status line. */
async function finished(index: number): Promise<string> {
  await page.waitForFunction((selector: string) => ["done", "interrupted", "failed"].includes((document.querySelector(selector) as HTMLElement | null)?.dataset.state ?? ""), { timeout: STEP_MS }, cell(index));
  return page.$eval(`${cell(index)} .cell-status`, (element) => element.textContent ?? "");
}

async function textOf(selector: string): Promise<string> {
  return page.$eval(selector, (element) => element.textContent ?? "");
}

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1400 });
  page.on("pageerror", (error) => problems.push(`page error: ${(error as Error).message}`));
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()} (at ${message.location().url ?? "?"}:${message.location().lineNumber ?? "?"})`);
  });
  page.on("request", (request) => void requested.push(request.url()));
  expect((await page.goto(`${url}/`, { waitUntil: "load" }))?.status()).toBe(200);
  await openSandbox(page, token, sandboxId, STEP_MS);
  await page.waitForSelector(`${cell(0)} .cell-code`, { timeout: STEP_MS });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await api("", { method: "DELETE" }).catch(() => undefined);
});

describe("the console's notebook", () => {
  it("shows a cell's output while it runs, then a figure, a DataFrame as a table and a traceback", async () => {
    // A sandbox without contexts starts with a python notebook; its first run makes the context.
    expect(await textOf("#notebook-context")).toContain("python · new context");
    const waiting = await runCell('import os, time\nprint("before the wait", flush=True)\nwhile not os.path.exists("go"):\n    time.sleep(0.05)\nprint("after the wait")');
    await page.waitForFunction((selector: string) => (document.querySelector(`${selector} .cell-output`)?.textContent ?? "").includes("before the wait"), { timeout: STEP_MS }, cell(waiting));
    // The cell is still running (it waits for a file the test has not written): the output came as it happened.
    expect(await page.$eval(cell(waiting), (element) => (element as HTMLElement).dataset.state)).toBe("running");
    expect(await textOf(`${cell(waiting)} .cell-count`)).toBe("[*]");
    expect(await textOf(`${cell(waiting)} .cell-output`)).not.toContain("after the wait");
    expect((await api("/files/write", { method: "POST", body: JSON.stringify({ path: "go", content: "" }) })).status).toBe(200);
    expect(await finished(waiting)).toMatch(/^done/);
    expect(await textOf(`${cell(waiting)} .cell-output .stream`)).toBe("before the wait\nafter the wait\n");
    expect(await textOf(`${cell(waiting)} .cell-count`)).toBe("[1]");
    expect(await textOf("#notebook-context")).toMatch(/python · \S+/);
    expect(await textOf("#notebook-context")).not.toContain("new context");

    // A matplotlib figure: shown as an image that decodes (or as its chart, with the image a click away).
    const figure = await runCell('import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title("rising")\nplt.show()');
    expect(await finished(figure)).toMatch(/^done/);
    const pngSwitch = await page.$(`${cell(figure)} .result button[data-format="png"]`);
    if (pngSwitch) await pngSwitch.click();
    await page.waitForFunction((selector: string) => {
      const image = document.querySelector(`${selector} .result img`) as HTMLImageElement | null;
      return image !== null && image.complete && image.naturalWidth > 100 && image.src.startsWith("data:image/png;base64,");
    }, { timeout: STEP_MS }, cell(figure));

    // A DataFrame: its HTML table, rebuilt in the page.
    const frame = await runCell('import pandas as pd\npd.DataFrame({"city": ["Oslo", "Lima"], "temp": [4, 19]})');
    expect(await finished(frame)).toMatch(/^done/);
    expect(await page.$eval(`${cell(frame)} .result`, (element) => (element as HTMLElement).dataset.format)).toBe("html");
    const headers = await page.$$eval(`${cell(frame)} .html-output table th`, (cells) => cells.map((th) => th.textContent?.trim()));
    expect(headers).toEqual(expect.arrayContaining(["city", "temp"]));
    const rows = await page.$$eval(`${cell(frame)} .html-output table tbody tr`, (trs) => trs.map((tr) => Array.from(tr.children).map((td) => td.textContent?.trim())));
    expect(rows).toEqual([["0", "Oslo", "4"], ["1", "Lima", "19"]]);

    // An error: the traceback as Python printed it.
    const failing = await runCell("def divide(a):\n    return a / 0\n\ndivide(1)");
    await finished(failing);
    const traceback = await textOf(`${cell(failing)} .cell-error`);
    expect(traceback).toContain("Traceback (most recent call last):");
    expect(traceback).toContain("    return a / 0");
    expect(traceback.trim().split("\n").at(-1)).toBe("ZeroDivisionError: division by zero");
    expect(problems).toEqual([]);
  }, 120_000);

  it("interrupts a runaway cell and keeps the context's state; restart clears it", async () => {
    await finished(await runCell("x = 41"));
    const runaway = await runCell("while True:\n    pass");
    await page.waitForFunction((selector: string) => document.querySelector(`${selector} .cell-status`)?.textContent === "running", { timeout: STEP_MS }, cell(runaway));
    await page.click("#notebook-interrupt");
    expect(await finished(runaway)).toBe("interrupted");
    expect(await page.$eval(`${cell(runaway)} .cell-error`, (element) => (element as HTMLElement).dataset.error)).toBe("KeyboardInterrupt");

    const after = await runCell("x + 1");
    expect(await finished(after)).toMatch(/^done/);
    expect(await textOf(`${cell(after)} .result`)).toBe("42");

    await page.click("#notebook-restart");
    expect(await page.waitForFunction(() => document.querySelector("#notebook-state")?.textContent?.startsWith("restarted"), { timeout: STEP_MS })).toBeTruthy();
    const gone = await runCell("x");
    await finished(gone);
    expect(await page.$eval(`${cell(gone)} .cell-error`, (element) => (element as HTMLElement).dataset.error)).toBe("NameError");
    expect(await textOf(`${cell(gone)} .cell-count`)).toBe("[1]");
    expect(problems).toEqual([]);
  }, 120_000);

  it("makes contexts in other languages, each with its own cells", async () => {
    const python = await page.$eval("#notebook-context", (select) => (select as HTMLSelectElement).value);
    const pythonCells = await page.$$eval("#notebook-cells .cells > .cell", (cells) => cells.length);

    await page.select("#notebook-language", "javascript");
    await page.click("#notebook-new");
    await page.waitForFunction(() => (document.querySelector("#notebook-context") as HTMLSelectElement).selectedOptions[0]?.textContent?.startsWith("javascript"), { timeout: STEP_MS });
    expect(await page.$$eval("#notebook-cells .cells > .cell", (cells) => cells.length)).toBe(1);
    const js = await runCell('const n = 6 * 7;\nconsole.log("from node");\nn');
    expect(await finished(js)).toMatch(/^done/);
    expect(await textOf(`${cell(js)} .stdout`)).toBe("from node\n");
    expect(await textOf(`${cell(js)} .result`)).toBe("42");

    await page.select("#notebook-language", "bash");
    await page.click("#notebook-new");
    await page.waitForFunction(() => (document.querySelector("#notebook-context") as HTMLSelectElement).selectedOptions[0]?.textContent?.startsWith("bash"), { timeout: STEP_MS });
    await finished(await runCell("cd /tmp && GREETING=hi"));
    const shell = await runCell('echo "$GREETING from $(pwd)"');
    expect(await finished(shell)).toMatch(/^done/);
    expect(await textOf(`${cell(shell)} .stdout`)).toBe("hi from /tmp\n");

    // Back to the python notebook: its cells are as they were.
    await page.select("#notebook-context", python);
    expect(await page.$$eval("#notebook-cells .cells > .cell", (cells) => cells.length)).toBe(pythonCells);
    const { contexts } = (await (await api("/code/contexts")).json()) as { contexts: { language: string }[] };
    expect(contexts.map((context) => context.language).sort()).toEqual(["bash", "javascript", "python"]);
    expect(problems).toEqual([]);
  }, 120_000);

  it("says when a notebook's context is gone, and makes a new one for its next run", async () => {
    const gone = await page.$eval("#notebook-context", (select) => (select as HTMLSelectElement).value);
    expect((await api(`/code/contexts/${gone}`, { method: "DELETE" })).status).toBe(200);
    const failed = await runCell("1 + 1");
    expect(await finished(failed)).toContain("CODE_CONTEXT_NOT_FOUND");
    expect(await textOf("#notebook-state")).toContain("the next run makes a new one");
    expect(await textOf("#notebook-context")).toContain("python · new context");

    const again = await runCell("1 + 2");
    expect(await finished(again)).toMatch(/^done/);
    expect(await textOf(`${cell(again)} .result`)).toBe("3");
    expect(await textOf(`${cell(again)} .cell-count`)).toBe("[1]");
    const made = await page.$eval("#notebook-context", (select) => (select as HTMLSelectElement).value);
    expect(made).toMatch(/^ctx_/);
    expect(made).not.toBe(gone);
    expect(problems).toEqual([]);
  }, 60_000);

  it("resumes a cell's stream that breaks mid-way: every line once, in order", async () => {
    // The page through a proxy that cuts each of the first three code-run streams it carries: the first
    // in its headers (before the run's start event: asked for again under its idempotency key, it must
    // not run twice), the others mid-event. The console's other streams (the network panel's audit
    // trail) pass untouched.
    const cutAt = [120, 550, 700];
    const proxy = await startCuttingProxy(url, { cutAfterBytes: (cut) => cutAt[cut], cutRequests: /\/code\// });
    const proxied = await browser.newPage();
    const errors: string[] = [];
    proxied.on("pageerror", (error) => errors.push((error as Error).message));
    try {
      await proxied.goto(`${proxy.url}/`, { waitUntil: "load" });
      await openSandbox(proxied, token, sandboxId, STEP_MS);
      await proxied.waitForSelector("#notebook-context option", { timeout: STEP_MS });
      const contextsBefore = await proxied.$$eval("#notebook-context option", (options) => options.length);
      await proxied.select("#notebook-language", "python");
      await proxied.click("#notebook-new");
      await proxied.waitForFunction((before: number) => (document.querySelector("#notebook-context") as HTMLSelectElement).options.length > before, { timeout: STEP_MS }, contextsBefore);
      await proxied.evaluate(() => {
        const editor = document.querySelector("#notebook-cells .cell-code") as HTMLTextAreaElement;
        editor.value = 'import time\nopen("notebook-runs.txt", "a").write("ran\\n")\nfor i in range(30):\n    print(f"line {i:02}", flush=True)\n    time.sleep(0.01)';
      });
      await proxied.click("#notebook-cells .cell-run");
      await proxied.waitForFunction(() => (document.querySelector("#notebook-cells .cell") as HTMLElement).dataset.state !== "running", { timeout: STEP_MS });
      expect(await proxied.$eval("#notebook-cells .cell-status", (element) => element.textContent)).toMatch(/^done/);
      const lines = Array.from({ length: 30 }, (_, i) => `line ${String(i).padStart(2, "0")}\n`).join("");
      expect(await proxied.$eval("#notebook-cells .cell .stream", (element) => element.textContent)).toBe(lines);
      expect(proxy.cuts).toBe(3);
      // The cell ran once, although its run was asked for twice.
      const runs = await api("/files/read", { method: "POST", body: JSON.stringify({ path: "notebook-runs.txt" }) });
      expect(((await runs.json()) as { content: string }).content).toBe("ran\n");
      expect(errors).toEqual([]);
    } finally {
      await proxied.close();
      await proxy.close();
    }
  }, 120_000);

  it("runs nothing a cell's output carries: HTML, SVG, markdown and text stay inert, and the token stays in the page", async () => {
    // Each payload, were it to run in the console, would mark the page and write a file with the tab's token.
    const steal =
      `window.top.stolen = (window.top.stolen || 0) + 1; fetch('/v1/sandboxes/${sandboxId}/files/write', {method: 'POST', ` +
      `headers: {authorization: 'Bearer ' + sessionStorage.getItem('sandbox-console-token'), 'content-type': 'application/json'}, ` +
      `body: JSON.stringify({path: 'stolen.txt', content: 'token'})})`;
    const html =
      `<b class="kept">bold survives</b><script>${steal}</script><img src="x" onerror="${steal}"><a href="javascript:${steal}">a link</a>` +
      `<div onmouseover="${steal}" id="hover-me">hover here</div><iframe srcdoc="<script>${steal}</script>"></iframe>` +
      `<style>body { display: none }</style><table><tr><td colspan="2" onclick="${steal}">cell</td></tr></table>`;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" onload="${steal}"><script>${steal}</script><rect width="40" height="40" fill="red"/></svg>`;
    const hostile = await runCell(
      [
        "from IPython.display import HTML, SVG, Javascript, Markdown, display",
        `display(HTML(${JSON.stringify(html)}))`,
        `display(SVG(${JSON.stringify(svg)}))`,
        `display(Markdown(${JSON.stringify(`**strong** <img src=x onerror="${steal}">`)}))`,
        `print(${JSON.stringify(`<img src=x onerror="${steal}">`)})`,
        `display(Javascript(${JSON.stringify(steal)}))`,
        `HTML(${JSON.stringify(`<svg><script>${steal}</script></svg><math><mi xlink:href="javascript:${steal}">m</mi></math>`)})`,
      ].join("\n"),
    );
    expect(await finished(hostile)).toMatch(/^done/);
    const output = `${cell(hostile)} .cell-output`;
    await page.hover(`${output} .html-output div`);
    await page.click(`${output} .html-output td`);
    // A later cell run to its end: whatever the payloads set off has had its time.
    await finished(await runCell("1 + 1"));

    expect(await page.evaluate(() => (window as unknown as { stolen?: number }).stolen)).toBeUndefined();
    expect(requested.filter((address) => address.includes("/files/write") || address.endsWith("/x"))).toEqual([]);
    expect((await api("/files/read", { method: "POST", body: JSON.stringify({ path: "stolen.txt" }) })).status).toBe(404);
    // Nothing live reached the page: no script, frame, style, handler or link; the CSP never had to refuse anything.
    const live = await page.$$eval(`${output} :is(script, iframe, style, a, svg, math, [onerror], [onload], [onmouseover], [onclick], [href], [srcdoc])`, (elements) => elements.map((element) => element.outerHTML));
    expect(live).toEqual([]);
    expect(await page.evaluate(() => getComputedStyle(document.body).display)).not.toBe("none");
    // Chromium checks the handlers of HTML the page parses against the page's policy even in the inert
    // document they can never run in, and says so: those refusals, at the parse, are the only ones.
    const atParse = (problem: string) => problem.includes("inline event handler") && problem.includes("/console/safe-html.js:");
    expect(problems.filter((problem) => !atParse(problem))).toEqual([]);
    problems.length = 0;

    // What is content still shows: the HTML's text and structure, the SVG as an image, markdown's HTML as text.
    expect(await textOf(`${output} .html-output b`)).toBe("bold survives");
    expect(await page.$eval(`${output} .html-output td`, (td) => td.getAttribute("colspan"))).toBe("2");
    const images = await page.$$eval(`${output} img`, (elements) => elements.map((image) => (image as HTMLImageElement).src.slice(0, 26)));
    expect(images).toEqual(["data:image/svg+xml;base64,"]);
    expect(await textOf(`${output} .markdown-output strong`)).toBe("strong");
    expect(await textOf(`${output} .markdown-output`)).toContain('<img src=x onerror="window.top.stolen');
    expect(await textOf(`${output} .stdout`)).toContain('<img src=x onerror="window.top.stolen');
    expect(await textOf(`${output} .result[data-format="javascript"]`)).toContain("window.top.stolen");
  }, 120_000);

  it("redraws charts from their data, in E2B's shape and with the service's fields, and shows the image when a chart cannot be drawn", async () => {
    const axes = { x_label: "x", y_label: "y", x_scale: "linear", y_scale: "linear" };
    const hostileWords = '<img src=x onerror="window.top.stolen = 1">';
    const charts: Record<string, unknown> = {
      // E2B's shapes: no kinds, positions, bases or orientation.
      e2bLine: { type: "line", title: "waves", x_label: "t", y_label: "amplitude", elements: [{ label: "sin", points: [[0, 0], [1, 0.84], [2, 0.91]] }, { label: "cos", points: [[0, 1], [1, 0.54], [2, -0.42]] }] },
      e2bScatter: { type: "scatter", title: "dots", elements: [{ label: "a", points: [[1, 2], [2, 3], [3, 5], [4, "bad"]] }] },
      e2bBars: { type: "bar", title: "sales", x_label: "quarter", y_label: "units", elements: [{ label: "Q1", group: "2024", value: 10 }, { label: "Q2", group: "2024", value: 14 }, { label: "Q1", group: "2025", value: "12" }, { label: "Q2", group: "2025", value: 18 }] },
      e2bPie: { type: "pie", title: "shares", elements: [{ label: "a", angle: 90, radius: 1 }, { label: "b", angle: 270, radius: 1 }] },
      e2bBoxes: { type: "box_and_whisker", title: "spread", elements: [{ label: "x", min: 1, first_quartile: 2, median: 3, third_quartile: 4, max: 5, outliers: [9] }, { label: "y", min: 2, first_quartile: 3, median: 4, third_quartile: 6, max: 7, outliers: [] }] },
      // The service's fields: element kinds, gaps, areas and error bars; placed, stacked and horizontal bars; placed boxes with means.
      mixedLine: {
        type: "line", title: "mixed", ...axes, x_ticks: [0, 1, 2], x_tick_labels: ["zero", "one", "two"], y_ticks: [0, 2, 4], y_tick_labels: ["0", "2", "4"],
        elements: [
          { kind: "line", label: "gappy", points: [[0, 1], [1, null], [2, 3]], y_errors: [[0.5, 1.5], null, [2, 4]] },
          { kind: "area", label: "band", points: [[0, 2], [1, 3], [2, 4]], baseline: [[0, 0], [1, 0.5], [2, 1]] },
          { kind: "scatter", label: "marks", points: [[0.5, 2], [1.5, 2.5]] },
        ],
      },
      dates: { type: "line", title: "daily", ...axes, x_scale: "datetime", x_ticks: [], x_tick_labels: [], y_ticks: [], y_tick_labels: [], elements: [{ kind: "line", label: "Line 1", points: [["2024-01-01T00:00:00", 1], ["2024-01-02T00:00:00", 3], ["2024-01-03T00:00:00", 2]] }] },
      stacked: {
        type: "bar", title: "stacked", ...axes, x_scale: "categorical", orientation: "vertical", x_ticks: ["a", "b"], x_tick_labels: ["a", "b"], y_ticks: [], y_tick_labels: [],
        elements: [
          { label: "a", group: "first", value: 1, position: "a", width: 0.8, base: 0, error: [0.9, 1.1] },
          { label: "b", group: "first", value: 2, position: "b", width: 0.8, base: 0, error: [1.8, 2.2] },
          { label: "a", group: "Group 2", value: 3, position: "a", width: 0.8, base: 1 },
          { label: "b", group: "Group 2", value: 4, position: "b", width: 0.8, base: 2 },
        ],
      },
      horizontal: { type: "bar", title: "regions", ...axes, y_scale: "categorical", orientation: "horizontal", x_ticks: [], x_tick_labels: [], y_ticks: ["north", "south"], y_tick_labels: ["north", "south"], elements: [{ label: "north", group: "sales", value: 5, position: "north", width: 0.8, base: 0 }, { label: "south", group: "sales", value: 6, position: "south", width: 0.8, base: 0 }] },
      histogram: { type: "bar", title: "bins", ...axes, orientation: "vertical", x_ticks: [1, 2, 3, 4], x_tick_labels: ["1", "2", "3", "4"], y_ticks: [], y_tick_labels: [], elements: [1, 2, 3].map((n) => ({ label: `${n + 0.5}`, group: "Group 1", value: n, position: n + 0.5, width: 1, base: 0 })) },
      placedBoxes: { type: "box_and_whisker", title: "boxes", ...axes, orientation: "horizontal", x_ticks: [], x_tick_labels: [], y_ticks: [1, 2], y_tick_labels: ["A", "B"], elements: [{ label: "A", position: 1, min: 1, first_quartile: 2.25, median: 3.5, third_quartile: 4.75, max: 5, outliers: [40], mean: 9.2 }, { label: "B", position: 2, min: 2, first_quartile: 2.5, median: 3, third_quartile: 3.5, max: 4, outliers: [], mean: 3 }] },
      logScatter: { type: "scatter", title: null, ...axes, y_scale: "log", x_ticks: [], x_tick_labels: [], y_ticks: [1, 10, 100], y_tick_labels: ["10^{0}", "10^{1}", "10^{2}"], elements: [{ kind: "scatter", label: "m", points: [[1, 1], [2, 40], [3, 100]] }] },
      superchart: { type: "superchart", title: "both", elements: [{ type: "bar", title: null, elements: [{ label: "a", group: "g", value: 1 }] }, { type: "pie", title: null, elements: [{ label: "a", angle: 360, radius: 1 }] }] },
      // What is not drawn keeps the image: an unknown chart, a superchart with an unknown part, a scale drawn otherwise, no data.
      unknown: { type: "unknown", title: null, elements: [], reason: "an image" },
      partlyUnknown: { type: "superchart", title: null, elements: [{ type: "pie", title: null, elements: [{ label: "a", angle: 360, radius: 1 }] }, { type: "unknown", title: null, elements: [], reason: "a mesh" }] },
      symlog: { type: "line", title: null, ...axes, y_scale: "symlog", elements: [{ kind: "line", label: "l", points: [[0, 1], [1, -1]] }] },
      empty: { type: "line", elements: [{ label: "none", points: "nope" }] },
      hostile: { type: "bar", title: hostileWords, x_label: hostileWords, elements: [{ label: hostileWords, group: hostileWords, value: 1 }] },
    };
    // The page's own module, loaded as the page loads it (a string, so the test's bundler leaves the import alone).
    await page.evaluate('import("/console/result-view.js").then((module) => { window.resultViewForTest = module.resultView; })');
    const drawn = await page.evaluate(
      (samples: Record<string, unknown>, png: string) => {
        const { resultViewForTest: resultView } = window as unknown as { resultViewForTest: (result: unknown) => HTMLElement };
        const box = document.createElement("div");
        box.id = "chart-samples";
        document.querySelector("#notebook-cells")!.append(box);
        const count = (element: Element, selector: string) => element.querySelectorAll(selector).length;
        return Object.fromEntries(
          Object.entries(samples).map(([name, chart]) => {
            const view = box.appendChild(resultView({ isMainResult: false, png, text: "<Figure>", chart }));
            const svgs = Array.from(view.querySelectorAll("svg"));
            return [
              name,
              {
                format: view.dataset.format,
                formats: Array.from(view.querySelectorAll("button.format")).map((button) => button.textContent),
                kinds: svgs.map((svg) => svg.dataset.chart),
                texts: Array.from(view.querySelectorAll("svg text")).map((text) => text.textContent),
                caption: view.querySelector("figcaption")?.textContent,
                polylines: Array.from(view.querySelectorAll("polyline")).map((line) => line.getAttribute("points")!.split(" ").length),
                areas: count(view, "polygon"),
                circles: count(view, ".chart-series circle"),
                errors: count(view, ".chart-error"),
                bars: Array.from(view.querySelectorAll(".chart-series rect")).map((rect) => ["x", "y", "width", "height"].map((a) => Number(rect.getAttribute(a)))),
                slices: count(view, ".chart-slice"),
                boxes: count(view, ".chart-box"),
                outliers: count(view, ".chart-outlier"),
                means: count(view, ".chart-mean"),
                images: Array.from(view.querySelectorAll("img")).map((image) => (image as HTMLImageElement).src.slice(0, 22)),
              },
            ];
          }),
        );
      },
      charts,
      DOT_PNG,
    );

    expect(drawn.e2bLine).toMatchObject({ format: "chart", formats: ["chart", "png", "text"], kinds: ["line"], polylines: [3, 3] });
    expect(drawn.e2bLine!.texts).toEqual(expect.arrayContaining(["waves", "t", "amplitude", "sin", "cos"]));
    expect(drawn.e2bScatter).toMatchObject({ kinds: ["scatter"], circles: 3 });
    expect(drawn.e2bBars).toMatchObject({ kinds: ["bar"] });
    expect(drawn.e2bBars!.bars).toHaveLength(4);
    expect(drawn.e2bBars!.texts).toEqual(expect.arrayContaining(["sales", "quarter", "units", "Q1", "Q2", "2024", "2025"]));
    expect(drawn.e2bPie).toMatchObject({ slices: 2, texts: ["shares", "a (25%)", "b (75%)"] });
    expect(drawn.e2bBoxes).toMatchObject({ boxes: 2, outliers: 1, means: 0 });

    // A gap splits the line in two; the area and the scatter are drawn as such; error bars where given.
    expect(drawn.mixedLine).toMatchObject({ kinds: ["line"], polylines: [1, 1], areas: 1, circles: 2, errors: 2 });
    expect(drawn.mixedLine!.texts).toEqual(expect.arrayContaining(["zero", "one", "two", "gappy", "band", "marks"]));
    expect(drawn.dates!.texts).toEqual(expect.arrayContaining(["2024-01-01", "2024-01-02", "2024-01-03"]));
    // Stacked bars share their category's place: the second group's bar starts where the first's ends.
    const [a1, b1, a2] = drawn.stacked!.bars as number[][];
    expect(a2![0]).toBe(a1![0]);
    expect(a2![1]! + a2![3]!).toBeCloseTo(a1![1]!, 1);
    expect(b1![0]).toBeGreaterThan(a1![0]!);
    expect(drawn.stacked).toMatchObject({ errors: 2 });
    // Horizontal bars grow along x, from the same left edge, the longer one longer.
    const [north, south] = drawn.horizontal!.bars as number[][];
    expect(north![0]).toBe(south![0]);
    expect(south![2]).toBeGreaterThan(north![2]!);
    expect(north![1]).toBeGreaterThan(south![1]!);
    expect(drawn.horizontal!.texts).toEqual(expect.arrayContaining(["north", "south"]));
    // A histogram's bins touch: each starts where the one before ends.
    const bins = drawn.histogram!.bars as number[][];
    expect(bins).toHaveLength(3);
    for (const i of [1, 2]) expect(bins[i - 1]![0]! + bins[i - 1]![2]!).toBeCloseTo(bins[i]![0]!, 1);
    expect(drawn.placedBoxes).toMatchObject({ boxes: 2, outliers: 1, means: 2 });
    expect(drawn.placedBoxes!.texts).toEqual(expect.arrayContaining(["A", "B"]));
    expect(drawn.logScatter).toMatchObject({ kinds: ["scatter"], circles: 3 });
    expect(drawn.logScatter!.texts).toEqual(expect.arrayContaining(["10⁰", "10¹", "10²"]));
    expect(drawn.superchart).toMatchObject({ kinds: ["bar", "pie"], caption: "both" });

    for (const name of ["unknown", "partlyUnknown", "symlog", "empty"]) expect(drawn[name], name).toMatchObject({ format: "png", kinds: [], images: ["data:image/png;base64,"] });
    expect(drawn.hostile).toMatchObject({ kinds: ["bar"], images: [] });
    expect(drawn.hostile!.texts).toContain(hostileWords);
    expect(await page.evaluate(() => (window as unknown as { stolen?: number }).stolen)).toBeUndefined();

    // The other forms are a click away.
    await page.click('#chart-samples .result:first-child button[data-format="png"]');
    expect(await page.$eval("#chart-samples .result:first-child", (element) => [(element as HTMLElement).dataset.format, element.querySelector("img")?.naturalWidth])).toEqual(["png", 1]);

    await page.screenshot({ path: `${OUTPUT_DIR}notebook.png`, fullPage: true });
    expect(problems).toEqual([]);
  }, 60_000);
});
