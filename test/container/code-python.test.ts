/**
 * Python contexts at the container server, with real CPython (/usr/bin/python3 and Debian's
 * matplotlib, numpy and pandas): state between runs, rich results, output and results as they
 * happen, errors as Python reports them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CodeContext } from "../../protocol/code.ts";
import { createContext, mainResult, pngSize, run, stdoutText, streamRunGated } from "./code-helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let sandbox: SandboxServer;
let context: CodeContext;

beforeAll(async () => {
  sandbox = await startSandbox();
  context = await createContext(sandbox, { language: "python" });
});
afterAll(() => sandbox.close());

describe("python contexts", () => {
  it("keep variables, imports, functions and the working directory between runs", async () => {
    expect(context).toMatchObject({ language: "python", cwd: sandbox.workspace, isDefault: false, executionCount: 0 });
    await run(sandbox, context.id, "import os, math\ncounter = 41\ndef bump(n):\n    return n + 1\nos.mkdir('sub')\nos.chdir('sub')");
    const next = await run(sandbox, context.id, "bump(counter), math.floor(2.5), os.getcwd()");
    expect(mainResult(next)?.text).toBe(`(42, 2, '${sandbox.workspace}/sub')`);
    expect(next.executionCount).toBe(2);
    expect(next.error).toBeUndefined();
  });

  it("never share state between two contexts", async () => {
    const other = await createContext(sandbox, { language: "python" });
    await run(sandbox, context.id, "secret = 'mine'");
    const seen = await run(sandbox, other.id, "secret");
    expect(seen.error).toMatchObject({ name: "NameError", value: "name 'secret' is not defined" });
    expect(mainResult(await run(sandbox, context.id, "secret"))?.text).toBe("'mine'");
  });

  it("give the last expression as the main result, display() results and prints in order", async () => {
    const execution = await run(sandbox, context.id, "print('one')\ndisplay({'a': 1})\nprint('two')\n'last'");
    expect(execution.results).toEqual([
      { text: "{'a': 1}", json: { a: 1 }, isMainResult: false },
      { text: "'last'", isMainResult: true },
    ]);
    expect(stdoutText(execution)).toBe("one\ntwo\n");
    // An assignment or a None value is no result.
    expect((await run(sandbox, context.id, "x = 5")).results).toEqual([]);
    expect((await run(sandbox, context.id, "None")).results).toEqual([]);
  });

  it("turn _repr_*_ methods into result formats", async () => {
    const code = [
      "class Rich:",
      "    def _repr_html_(self): return '<b>rich</b>'",
      "    def _repr_markdown_(self): return '**rich**'",
      "    def _repr_svg_(self): return '<svg></svg>'",
      "    def _repr_png_(self): return b'\\x89PNG-bytes'",
      "    def _repr_json_(self): return {'rich': True}",
      "    def _repr_latex_(self): return '$r$'",
      "    def __repr__(self): return 'Rich()'",
      "Rich()",
    ].join("\n");
    expect(mainResult(await run(sandbox, context.id, code))).toEqual({
      text: "Rich()",
      html: "<b>rich</b>",
      markdown: "**rich**",
      svg: "<svg></svg>",
      png: Buffer.from("\x89PNG-bytes", "latin1").toString("base64"),
      json: { rich: true },
      latex: "$r$",
      isMainResult: true,
    });
  });

  it("return a matplotlib figure as a PNG, shown mid-cell or left open at the end", async () => {
    const code = [
      "import matplotlib.pyplot as plt",
      "plt.figure(figsize=(8, 6), dpi=100)",
      "plt.plot([1, 2, 3], [3, 1, 2])",
      "plt.show()",
      "print('after show')",
      "plt.figure(figsize=(4, 3), dpi=100)",
      "plt.bar(['a', 'b'], [1, 2])",
      "None",
    ].join("\n");
    const execution = await run(sandbox, context.id, code);
    expect(execution.error).toBeUndefined();
    expect(execution.results).toHaveLength(2);
    const [shown, leftOpen] = execution.results;
    expect(shown?.text).toBe("<Figure size 800x600 with 1 Axes>");
    expect(pngSize(shown!.png!)).toMatchObject({ width: 800, height: 600 });
    expect(pngSize(shown!.png!).bytes).toBeGreaterThan(5_000);
    expect(pngSize(leftOpen!.png!)).toMatchObject({ width: 400, height: 300 });
    expect(stdoutText(execution)).toBe("after show\n");
    // Shown figures are closed: the next cell has none.
    expect((await run(sandbox, context.id, "1")).results).toHaveLength(1);
  });

  it("return a pandas DataFrame as HTML and text", async () => {
    const result = mainResult(await run(sandbox, context.id, "import pandas as pd\npd.DataFrame({'city': ['Oslo', 'Lima'], 'n': [1, 2]})"));
    expect(result?.html).toMatch(/<table[^>]*class="dataframe"/);
    expect(result?.html).toContain("<td>Oslo</td>");
    expect(result?.text).toMatch(/city\s+n\n0\s+Oslo\s+1\n1\s+Lima\s+2/);
    expect(mainResult(await run(sandbox, context.id, "import numpy as np\nnp.arange(4).sum()"))?.text).toBe("6");
  });

  it("stream stdout before the cell ends, unbuffered, and display() results mid-cell", async () => {
    // The cell ends only once the test has seen its first print and its display().
    const code = (gate: string) =>
      `import os, time\nprint('tick', end='')\ndisplay('shown')\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.01)\nprint(' tock')`;
    const events = await streamRunGated(sandbox, { contextId: context.id, code }, (seen) => seen.some((event) => event.type === "stdout") && seen.some((event) => event.type === "result"));
    const [, first, shown, ...rest] = events;
    expect(events.slice(0, 3).map((event) => event.type)).toEqual(["start", "stdout", "result"]);
    expect(first).toMatchObject({ type: "stdout", data: "tick", offset: 0 });
    expect(shown).toMatchObject({ type: "result", result: { text: "'shown'", isMainResult: false } });
    // The last print may come in more than one piece (its text, then its newline).
    const complete = rest.pop();
    expect(rest.map((event) => event.type)).toEqual(rest.map(() => "stdout"));
    expect(rest.flatMap((event) => (event.type === "stdout" ? [event.data] : [])).join("")).toBe(" tock\n");
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(complete).toMatchObject({ type: "complete", executionCount: expect.any(Number), duration: expect.any(Number) });
  });

  it("capture the output of subprocesses and of stderr", async () => {
    const execution = await run(sandbox, context.id, "import os, sys\nos.system('echo from a shell')\nprint('to stderr', file=sys.stderr)");
    expect(stdoutText(execution)).toBe("from a shell\n");
    expect(execution.logs.stderr.join("")).toBe("to stderr\n");
  });

  it("report errors with Python's traceback, as results of the run", async () => {
    const zero = await run(sandbox, context.id, "def divide(a):\n    return a / 0\ndivide(1)");
    expect(zero.error).toMatchObject({ name: "ZeroDivisionError", value: "division by zero" });
    expect(zero.error!.traceback[0]).toBe("Traceback (most recent call last):");
    expect(zero.error!.traceback).toContain("    return a / 0");
    expect(zero.error!.traceback.at(-1)).toBe("ZeroDivisionError: division by zero");
    expect(zero.error!.traceback.join("\n")).not.toMatch(/<string>|driver/);

    const syntax = await run(sandbox, context.id, "def broken(:\n    pass");
    expect(syntax.error).toMatchObject({ name: "SyntaxError" });
    expect(syntax.error!.traceback.at(-1)).toMatch(/^SyntaxError: /);

    const name = await run(sandbox, context.id, "print('before')\nundefined_name");
    expect(name.error).toMatchObject({ name: "NameError", value: "name 'undefined_name' is not defined" });
    expect(stdoutText(name)).toBe("before\n");
  });

  it("say which Debian package to install for a missing module", async () => {
    const execution = await run(sandbox, context.id, "import sklearn");
    expect(execution.error?.name).toBe("ModuleNotFoundError");
    expect(execution.error?.value).toContain("apt-get install -y python3-sklearn");
  });

  it("run the driver from its file (a one-line command line), with the working directory first on sys.path", async () => {
    const code = [
      "import os, sys",
      "open('sandbox_local_module.py', 'w').write('VALUE = 7\\n')",
      "import sandbox_local_module",
      "args = open('/proc/self/cmdline', 'rb').read().split(b'\\0')[1:-1]",
      "[os.path.basename(arg).decode() for arg in args], sandbox_local_module.VALUE, sys.path[0]",
    ].join("\n");
    expect(mainResult(await run(sandbox, context.id, code))?.text).toBe("(['python-driver.py', 'python-charts.py'], 7, '')");
  });

  it("run top-level await", async () => {
    const execution = await run(sandbox, context.id, "import asyncio\nawait asyncio.sleep(0.01)\n'awaited'");
    expect(mainResult(execution)?.text).toBe("'awaited'");
  });
});
