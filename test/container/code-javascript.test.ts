/**
 * JavaScript and TypeScript contexts at the container server: a Node process per context (not the
 * server), one vm context with top-level await, console capture, the last expression as the main
 * result, import() and static import statements from the workspace, TypeScript through Node's type
 * stripping.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CodeContext } from "../../protocol/code.ts";
import { createContext, mainResult, run, stdoutText, streamRunGated } from "./code-helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let sandbox: SandboxServer;
let js: CodeContext;

beforeAll(async () => {
  sandbox = await startSandbox();
  js = await createContext(sandbox, { language: "javascript" });
});
afterAll(() => sandbox.close());

describe("javascript contexts", () => {
  it("run in a process of their own and keep state between runs", async () => {
    const pid = mainResult(await run(sandbox, js.id, "process.pid"))?.text;
    expect(Number(pid)).not.toBe(process.pid);
    await run(sandbox, js.id, "const base = 40; let step = 1; function add(a, b) { return a + b }");
    expect(mainResult(await run(sandbox, js.id, "add(base, step + 1)"))?.text).toBe("42");
    // A cell can run again: its top-level declarations do not clash with their last run.
    await run(sandbox, js.id, "const base = 1");
    expect(mainResult(await run(sandbox, js.id, "base"))?.text).toBe("1");
  });

  it("run the driver from its file: the interpreter's command line is one short line", async () => {
    const code = "require('node:fs').readFileSync('/proc/self/cmdline', 'utf8').split('\\0').slice(1, -1).map((arg) => require('node:path').basename(arg)).join(' ')";
    expect(mainResult(await run(sandbox, js.id, code))?.text).toBe("'--expose-internals --disable-warning=ExperimentalWarning javascript-driver.cjs javascript'");
  });

  it("await at the top level, and keep what the awaiting cell declared", async () => {
    const execution = await run(sandbox, js.id, "const answer = await new Promise((resolve) => setTimeout(() => resolve(21), 20));\nanswer * 2");
    expect(mainResult(execution)?.text).toBe("42");
    expect(mainResult(await run(sandbox, js.id, "answer"))?.text).toBe("21");
  });

  it("capture console.log and console.error, with the last expression as the main result", async () => {
    const execution = await run(sandbox, js.id, "console.log('hello', { a: 1 });\nconsole.error('oops');\n[1, 2, 3].map((n) => n * 2)");
    expect(stdoutText(execution)).toBe("hello { a: 1 }\n");
    expect(execution.logs.stderr).toEqual(["oops\n"]);
    expect(execution.results).toEqual([{ text: "[ 2, 4, 6 ]", isMainResult: true }]);
    expect((await run(sandbox, js.id, "let nothing = undefined")).results).toEqual([]);
  });

  it("show rich results with display()", async () => {
    const execution = await run(sandbox, js.id, "display.html('<b>bold</b>');\ndisplay.png(new Uint8Array([137, 80, 78, 71]));\ndisplay({ n: 1 });\n'end'");
    expect(execution.results).toEqual([
      { html: "<b>bold</b>", isMainResult: false },
      { png: Buffer.from([137, 80, 78, 71]).toString("base64"), isMainResult: false },
      { text: "{ n: 1 }", isMainResult: false },
      { text: "'end'", isMainResult: true },
    ]);
  });

  it("stream console output while the cell awaits", async () => {
    // The cell ends only once the test has seen its first line.
    const code = (gate: string) =>
      `console.log('early');\nconst { existsSync } = require('node:fs');\nwhile (!existsSync(${JSON.stringify(gate)})) await new Promise((resolve) => setTimeout(resolve, 10));\nconsole.log('late')`;
    const events = await streamRunGated(sandbox, { contextId: js.id, code }, (seen) => seen.some((event) => event.type === "stdout"));
    expect(events.map((event) => event.type)).toEqual(["start", "stdout", "stdout", "complete"]);
    expect(events.flatMap((event) => (event.type === "stdout" ? [event.data] : []))).toEqual(["early\n", "late\n"]);
  });

  it("report a thrown Error with its stack, and syntax errors", async () => {
    const thrown = await run(sandbox, js.id, "function inner() { throw new RangeError('too far') }\nfunction outer() { inner() }\nouter()");
    expect(thrown.error).toMatchObject({ name: "RangeError", value: "too far" });
    const stack = thrown.error!.traceback.join("\n");
    expect(stack).toContain("RangeError: too far");
    expect(stack).toMatch(/at inner \(.*cell-\d+\.js:1:\d+\)/);
    expect(stack).toMatch(/at outer \(.*cell-\d+\.js:2:\d+\)/);
    expect(stack).not.toMatch(/node:vm|\[eval\]/);

    const syntax = await run(sandbox, js.id, "let = = 1");
    expect(syntax.error?.name).toBe("SyntaxError");
    const undefinedName = await run(sandbox, js.id, "notDefinedAnywhere + 1");
    expect(undefinedName.error).toMatchObject({ name: "ReferenceError", value: "notDefinedAnywhere is not defined" });
    const nonError = await run(sandbox, js.id, "throw 42");
    expect(nonError.error).toMatchObject({ name: "Uncaught", value: "42" });
  });

  it("import() packages installed in the workspace, and require()", async () => {
    const pkg = join(sandbox.workspace, "node_modules", "greeter");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "greeter", type: "module", exports: "./index.js" }));
    writeFileSync(join(pkg, "index.js"), "export const greet = (name) => `hello ${name}`;\n");
    const fresh = await createContext(sandbox, { language: "javascript" });
    expect(mainResult(await run(sandbox, fresh.id, "const { greet } = await import('greeter');\ngreet('sandbox')"))?.text).toBe("'hello sandbox'");
    expect(mainResult(await run(sandbox, fresh.id, "require('node:path').join('a', 'b')"))?.text).toBe("'a/b'");
  });

  it("run static import statements, of every form, and keep what they bind for later cells", async () => {
    const pkg = join(sandbox.workspace, "node_modules", "shapes");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "shapes", type: "module", exports: "./index.js" }));
    writeFileSync(join(pkg, "index.js"), "export const area = (w, h) => w * h;\nexport default 'square';\nexport const sides = 4;\n");
    writeFileSync(join(sandbox.workspace, "data.json"), JSON.stringify({ n: 3 }));
    const fresh = await createContext(sandbox, { language: "javascript" });
    const cell = [
      "import shape, { area, sides as count } from 'shapes';",
      "import * as shapes from 'shapes';",
      "import {",
      "  join,",
      "} from 'node:path';",
      "import data from './data.json' with { type: 'json' };",
      "import 'node:os';",
      "export const made = `${shape}:${area(2, 3)}:${count}:${shapes.sides}:${join('a', 'b')}:${data.n}`;",
      "made",
    ].join("\n");
    const execution = await run(sandbox, fresh.id, cell);
    expect(execution.error).toBeUndefined();
    expect(mainResult(execution)?.text).toBe("'square:6:4:4:a/b:3'");
    expect(mainResult(await run(sandbox, fresh.id, "[typeof area, made]"))?.text).toBe("[ 'function', 'square:6:4:4:a/b:3' ]");
    // Lines keep their numbers: an error after a multi-line import points at its own line.
    const thrown = await run(sandbox, fresh.id, "import {\n  sep,\n} from 'node:path';\nthrow new Error(sep)");
    expect(thrown.error?.traceback.join("\n")).toMatch(/cell-\d+\.js:4:/);
    const missing = await run(sandbox, fresh.id, "import { nothing } from 'no-such-package'");
    expect(missing.error?.value).toContain("no-such-package");
  });

  it("run static imports in TypeScript, type-only imports left out", async () => {
    const ts = await createContext(sandbox, { language: "typescript" });
    const execution = await run(sandbox, ts.id, "import type { ParsedPath } from 'node:path';\nimport { parse } from 'node:path';\nconst parts: ParsedPath = parse('/a/b.txt');\nparts.ext");
    expect(execution.error).toBeUndefined();
    expect(mainResult(execution)?.text).toBe("'.txt'");
  });

  it("run TypeScript through type stripping", async () => {
    const ts = await createContext(sandbox, { language: "typescript" });
    expect(ts.language).toBe("typescript");
    const execution = await run(sandbox, ts.id, "interface Point { x: number; y: number }\nconst p: Point = { x: 3, y: 4 };\nconst norm = (q: Point): number => Math.hypot(q.x, q.y);\nnorm(p)");
    expect(execution.error).toBeUndefined();
    expect(mainResult(execution)?.text).toBe("5");
    expect(mainResult(await run(sandbox, ts.id, "enum Color { Red, Green }\nColor.Green"))?.text).toBe("1");
    const typed = await run(sandbox, ts.id, "const s = await Promise.resolve<string>('typed');\ns.toUpperCase()");
    expect(mainResult(typed)?.text).toBe("'TYPED'");
  });
});
