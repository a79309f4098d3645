/**
 * Cloudflare's code-interpreter cases (their code-interpreter workflow and parallel context creation),
 * ported to getSandbox: contexts made, listed and deleted; Python and JavaScript state between cells,
 * top-level await and errors; data passed from Python to JavaScript through a file; a streamed cell;
 * isolation between contexts and one cell at a time within one; bad languages and unknown contexts.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { CodeContext, CodeLanguageName, Execution } from "../../src/client/index.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

const stdout = (execution: Execution) => execution.logs.stdout.join("");
const firstText = (execution: Execution) => execution.results[0]?.text ?? "";

describe("code interpreter", () => {
  const sandbox = sandboxes.create("cf-code");

  it("creates, lists and deletes contexts", async () => {
    const python = await sandbox.createCodeContext({ language: "python" });
    const js = await sandbox.createCodeContext({ language: "javascript" });
    expect(python).toMatchObject({ id: expect.any(String), language: "python" });
    expect(js).toMatchObject({ id: expect.any(String), language: "javascript" });
    expect(js.id).not.toBe(python.id);
    expect((await sandbox.listCodeContexts()).map((c) => c.id)).toEqual(expect.arrayContaining([python.id, js.id]));
    await sandbox.deleteCodeContext(python.id);
    const after = (await sandbox.listCodeContexts()).map((c) => c.id);
    expect(after).not.toContain(python.id);
    expect(after).toContain(js.id);
    await sandbox.deleteCodeContext(js);
  });

  it("runs Python: output, state between cells, errors", async () => {
    const context = await sandbox.createCodeContext({ language: "python" });
    const hello = await sandbox.runCode('print("Hello from Python!")', { context });
    expect((hello as Execution & { code?: string }).code).toBe('print("Hello from Python!")');
    expect(stdout(hello)).toContain("Hello from Python!");
    expect(hello.error).toBeUndefined();
    expect((await sandbox.runCode("x = 42\ny = 10", { context })).error).toBeUndefined();
    const sum = await sandbox.runCode("result = x + y\nprint(result)", { context });
    expect(stdout(sum)).toContain("52");
    const failed = await sandbox.runCode("x = 1 / 0", { context });
    expect(failed.error?.name).toContain("Error");
    expect(failed.error?.message).toContain("division by zero");
    await sandbox.deleteCodeContext(context);
  });

  it("runs JavaScript: state, top-level await, promises, IIFE, errors", async () => {
    const context = await sandbox.createCodeContext({ language: "javascript" });
    const run = (code: string) => sandbox.runCode(code, { context });
    const hello = await run('console.log("Hello from JavaScript!");');
    expect(stdout(hello)).toContain("Hello from JavaScript!");
    expect(hello.error).toBeUndefined();
    await run("global.counter = 0;");
    expect(stdout(await run("console.log(++global.counter);"))).toContain("1");
    expect(firstText(await run("const result = await Promise.resolve(42);\nresult"))).toContain("42");
    expect(firstText(await run("const a = await Promise.resolve(10);\nconst b = await Promise.resolve(20);\na + b"))).toContain("30");
    const rejected = await run('await Promise.reject(new Error("async error"))');
    expect(rejected.error).toBeDefined();
    expect(rejected.error?.message).toContain("async error");
    const data = await run("const delay = (ms) => new Promise(resolve => setTimeout(resolve, ms));\nawait delay(10);\nconst data = { status: 'success', value: 123 };\ndata");
    expect(data.error).toBeUndefined();
    expect(JSON.stringify(data.results[0]?.json ?? data.results[0]?.text)).toContain("success");
    await run("const persistedValue = await Promise.resolve(99);");
    expect(firstText(await run("persistedValue"))).toContain("99");
    expect(firstText(await run("Promise.resolve(123)"))).toContain("123");
    expect(firstText(await run("(async () => {\n  const value = await Promise.resolve('hello');\n  return value + ' world';\n})()"))).toContain("hello world");
    const undefinedName = await run("console.log(undefinedVariable);");
    expect(undefinedName.error?.name || undefinedName.error?.message).toMatch(/Error|undefined/i);
    await sandbox.deleteCodeContext(context);
  });

  it("passes data from Python to JavaScript through a file, and streams a cell", async () => {
    const python = await sandbox.createCodeContext({ language: "python" });
    const saved = await sandbox.runCode("import json\ndata = {'values': [1, 2, 3, 4, 5]}\nwith open('/tmp/shared_data.json', 'w') as f:\n    json.dump(data, f)\nprint(\"Data saved\")", { context: python });
    expect(saved.error).toBeUndefined();
    expect(stdout(saved)).toContain("Data saved");
    const js = await sandbox.createCodeContext({ language: "javascript" });
    const summed = await sandbox.runCode("const fs = require('fs');\nconst data = JSON.parse(fs.readFileSync('/tmp/shared_data.json', 'utf8'));\nconst sum = data.values.reduce((a, b) => a + b, 0);\nconsole.log('Sum:', sum);", { context: js });
    expect(summed.error).toBeUndefined();
    expect(stdout(summed)).toContain("Sum: 15");

    let streamed = "";
    let chunks = 0;
    for await (const event of sandbox.runCodeStream('import time\nfor i in range(3):\n    print(f"Step {i}")\n    time.sleep(0.1)', { context: python })) {
      if (event.type === "stdout") {
        streamed += event.data;
        chunks++;
      }
    }
    expect(chunks).toBeGreaterThan(0);
    expect(streamed).toBe("Step 0\nStep 1\nStep 2\n");
    await Promise.all([sandbox.deleteCodeContext(python), sandbox.deleteCodeContext(js)]);
  });

  it("keeps contexts apart, and runs one cell at a time within a context", async () => {
    const one = await sandbox.createCodeContext({ language: "python" });
    const two = await sandbox.createCodeContext({ language: "python" });
    await sandbox.runCode('secret = "context1"', { context: one });
    const leaked = await sandbox.runCode("print(secret)", { context: two });
    expect(leaked.error?.name || leaked.error?.message).toMatch(/NameError|not defined/);

    const many = await Promise.all(Array.from({ length: 4 }, () => sandbox.createCodeContext({ language: "javascript" })));
    for (const [i, context] of many.entries()) {
      const set = await sandbox.runCode(`const contextValue = ${i}; contextValue;`, { context });
      expect(set.error).toBeUndefined();
      expect(firstText(set)).toContain(String(i));
    }
    for (const [i, context] of many.entries()) expect(firstText(await sandbox.runCode("contextValue;", { context }))).toContain(String(i));

    const counter = many[0] as CodeContext;
    await sandbox.runCode("let counter = 0;", { context: counter });
    const runs = await Promise.all(Array.from({ length: 5 }, () => sandbox.runCode("counter++; counter;", { context: counter })));
    const values = runs.map((run) => Number(firstText(run))).sort((a, b) => a - b);
    expect(values).toEqual([1, 2, 3, 4, 5]);
    expect(firstText(await sandbox.runCode("counter;", { context: counter }))).toBe("5");
    await Promise.all([one, two, ...many].map((context) => sandbox.deleteCodeContext(context)));
  });

  it("refuses an unknown language and unknown contexts", async () => {
    await expect(sandbox.createCodeContext({ language: "invalid-lang" as CodeLanguageName })).rejects.toMatchObject({ httpStatus: expect.any(Number) });
    await expect(sandbox.runCode('print("test")', { context: "fake-context-id-12345" })).rejects.toMatchObject({ code: expect.stringMatching(/CONTEXT_NOT_FOUND/) });
    await expect(sandbox.deleteCodeContext("fake-id-99999")).rejects.toMatchObject({ code: expect.stringMatching(/CONTEXT_NOT_FOUND/) });
  });
});

describe("parallel context creation", () => {
  const sandbox = sandboxes.create("cf-code-parallel");

  it("creates 6 JavaScript contexts at once", async () => {
    const contexts = await Promise.all(Array.from({ length: 6 }, () => sandbox.createCodeContext({ language: "javascript" })));
    expect(new Set(contexts.map((c) => c.id)).size).toBe(6);
    for (const context of contexts) expect(context.language).toBe("javascript");
    await Promise.all(contexts.map((context) => sandbox.deleteCodeContext(context)));
  });

  it("creates JavaScript and Python contexts at once without one blocking the other", async () => {
    const contexts = await Promise.all([
      sandbox.createCodeContext({ language: "javascript" }),
      sandbox.createCodeContext({ language: "python" }),
      sandbox.createCodeContext({ language: "javascript" }),
      sandbox.createCodeContext({ language: "python" }),
    ]);
    expect(contexts.map((c) => c.language)).toEqual(["javascript", "python", "javascript", "python"]);
    await Promise.all(contexts.map((context) => sandbox.deleteCodeContext(context)));
  });

  it("deletes contexts in parallel", async () => {
    const contexts = await Promise.all(Array.from({ length: 4 }, () => sandbox.createCodeContext({ language: "javascript" })));
    const deleted = await Promise.all(contexts.map((context) => sandbox.deleteCodeContext(context.id)));
    expect(deleted.map((d) => d.contextId).sort()).toEqual(contexts.map((c) => c.id).sort());
    const left = (await sandbox.listCodeContexts()).map((c) => c.id);
    for (const context of contexts) expect(left).not.toContain(context.id);
  });
});
