/**
 * Python cells as IPython users write them, at the container server: `!cmd` (output and exit code,
 * interrupts passed on), `%` and `%%` magics, IPython.display's display/Markdown/HTML/Image, indented
 * cells, dicts as JSON results, a DataFrame's data as JSON beside its HTML, PIL images as PNG.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CodeContext } from "../../protocol/code.ts";
import { createContext, mainResult, pngSize, run, stdoutText } from "./code-helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let sandbox: SandboxServer;
let python: CodeContext;

beforeAll(async () => {
  sandbox = await startSandbox();
  python = await createContext(sandbox, { language: "python" });
});
afterAll(() => sandbox.close());

describe("python cells with IPython's syntax", () => {
  it("run !commands with Python's variables, capture their output, and keep their exit code", async () => {
    const execution = await run(sandbox, python.id, "word = 'shell'\n!echo hello $word\nlisting = !ls /\n('usr' in listing, len(listing) > 3)");
    expect(stdoutText(execution)).toBe("hello shell\n");
    expect(mainResult(execution)?.text).toBe("(True, True)");
    expect(mainResult(await run(sandbox, python.id, "!exit 3\n_exit_code"))?.text).toBe("3");
  });

  it("interrupt a !command on time limit, keeping the state", async () => {
    await run(sandbox, python.id, "kept = 'yes'");
    const execution = await run(sandbox, python.id, "!sleep 30", { timeout: 300 });
    expect(execution).toMatchObject({ interrupted: true, error: { name: "KeyboardInterrupt" } });
    expect(execution.contextRestarted).toBeUndefined();
    expect(mainResult(await run(sandbox, python.id, "kept"))?.text).toBe("'yes'");
  });

  it("run line and cell magics", async () => {
    const context = await createContext(sandbox, { language: "python" });
    expect(stdoutText(await run(sandbox, context.id, "%cd /tmp"))).toBe("/tmp\n");
    expect(mainResult(await run(sandbox, context.id, "%pwd"))?.text).toBe("'/tmp'");
    expect(mainResult(await run(sandbox, context.id, "%env MAGIC_VAR=set\nimport os\nos.environ['MAGIC_VAR']"))?.text).toBe("'set'");
    expect(stdoutText(await run(sandbox, context.id, "%%bash\necho from a bash cell"))).toBe("from a bash cell\n");
    expect(stdoutText(await run(sandbox, context.id, "%timeit -n 1 -r 1 sum(range(10))"))).toMatch(/per loop/);
  });

  it("show IPython.display's objects as rich results", async () => {
    const execution = await run(sandbox, python.id, [
      "from IPython.display import display, Markdown, HTML, Image, Latex, JSON, SVG",
      "display(Markdown('# Title'), HTML('<b>bold</b>'))",
      "display(Latex(r'$x^2$'))",
      "display(SVG('<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"></svg>'))",
      "import base64",
      "Image(data=base64.b64decode('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='))",
    ].join("\n"));
    expect(execution.error).toBeUndefined();
    expect(execution.results.map((result) => Object.keys(result).filter((key) => key !== "text" && key !== "isMainResult"))).toEqual([["markdown"], ["html"], ["latex"], ["svg"], ["png"]]);
    expect(execution.results[0]).toMatchObject({ markdown: "# Title", isMainResult: false });
    expect(execution.results.at(-1)).toMatchObject({ isMainResult: true });
  });

  it("run an indented cell as if it were not", async () => {
    expect(mainResult(await run(sandbox, python.id, "    a = 20\n    if a:\n        a += 1\n    a * 2"))?.text).toBe("42");
  });

  it("give dicts as JSON, a DataFrame's data as JSON beside its HTML, and PIL images as PNG", async () => {
    expect(mainResult(await run(sandbox, python.id, "{'a': 1, 'b': [True, None]}"))).toMatchObject({ json: { a: 1, b: [true, null] } });
    // A dict JSON cannot hold is text only.
    expect(mainResult(await run(sandbox, python.id, "{1: object()}"))).not.toHaveProperty("json");
    const frame = mainResult(await run(sandbox, python.id, "import pandas as pd\npd.DataFrame({'n': [1, 2], 's': ['x', 'y']})"));
    expect(frame).toMatchObject({ html: expect.stringContaining("<table"), json: { columns: ["n", "s"], index: [0, 1], data: [[1, "x"], [2, "y"]] } });
    const image = await run(sandbox, python.id, "from PIL import Image\nimg = Image.new('RGB', (8, 5), 'red')\ndisplay(img)\nimg");
    expect(image.results.map((result) => [pngSize(result.png!).width, pngSize(result.png!).height, result.isMainResult])).toEqual([[8, 5, false], [8, 5, true]]);
  });
});
