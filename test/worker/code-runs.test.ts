/**
 * What a run may ask for and what ends it, through the whole chain (Worker, Durable Object, the local
 * runtime's container): a run's own env and language aliases over getSandbox and /v1, bash contexts,
 * and /v1 callers that go away — a buffered run's caller, and a streamed run's with
 * interruptOnDisconnect — whose cells are interrupted with their contexts' state kept.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { CodeEvent, Execution } from "../../protocol/code.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { getHttpSandbox } from "../../src/client/http.ts";
import { CodeContextBusyError } from "../../src/client/index.ts";
import { apiCall, sandboxPool, uniqueId } from "./helpers.ts";
import { env, exports } from "cloudflare:workers";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

const text = (execution: Execution) => execution.results.find((result) => result.isMainResult)?.text;
const stdout = (execution: Execution) => execution.logs.stdout.join("");

/** Runs `code` with wait: false until the context is free; fails after `tries`. */
async function whenFree(run: () => Promise<Execution>, tries = 100): Promise<Execution> {
  for (let i = 0; i < tries; i++) {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof CodeContextBusyError)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error("the context stayed busy");
}

describe("runs through getSandbox", () => {
  const sandbox = sandboxes.create("code-runs-rpc");

  it("take their own env, in python, javascript and bash, and put it back after", async () => {
    const python = await sandbox.runCode("import os\nos.environ.get('ONLY_HERE')", { env: { ONLY_HERE: "py" } });
    expect(text(python)).toBe("'py'");
    expect(text(await sandbox.runCode("import os\nstr(os.environ.get('ONLY_HERE'))"))).toBe("'None'");
    // Cloudflare's name for it works too.
    const js = await sandbox.runCode("process.env.ONLY_HERE", { language: "js", envVars: { ONLY_HERE: "js", SKIPPED: undefined } });
    expect(js).toMatchObject({ language: "javascript", results: [{ text: "'js'" }] });
    const shell = await sandbox.runCode("echo $ONLY_HERE", { language: "sh", env: { ONLY_HERE: "sh" } });
    expect(shell).toMatchObject({ language: "bash", logs: { stdout: ["sh\n"] } });
  });

  it("keep a bash context's shell state between runs", async () => {
    const context = await sandbox.createCodeContext({ language: "bash" });
    await sandbox.runCode("cd /tmp && counter=1", { context });
    expect(stdout(await sandbox.runCode("echo $PWD $((counter + 1))", { context }))).toBe("/tmp 2\n");
  });
});

describe("/v1 callers that go away", () => {
  it("take a buffered run's cell with them; the context is free again with its state", async () => {
    const id = uniqueId("code-gone-buffered");
    const sandbox = getHttpSandbox(id, { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: (input, init) => worker.fetch(new Request(input, init)) });
    try {
      const context = await sandbox.createCodeContext({ language: "python" });
      await sandbox.runCode("kept = 'state'", { context });
      const response = await apiCall(`/v1/sandboxes/${id}/code/run`, {
        method: "POST",
        json: { contextId: context.id, code: "import time\ntry:\n    time.sleep(120)\nexcept KeyboardInterrupt:\n    interrupted = True\n    raise" },
      });
      expect(response.status).toBe(200);
      // Busy while the caller is there...
      await expect(sandbox.runCode("1", { context, wait: false })).rejects.toBeInstanceOf(CodeContextBusyError);
      // ...and free soon after it goes, with the cell interrupted and the state kept.
      await response.body!.cancel();
      const after = await whenFree(() => sandbox.runCode("(kept, interrupted)", { context, wait: false }));
      expect(text(after)).toBe("('state', True)");
    } finally {
      await sandbox.destroy();
    }
  });

  it("answer a buffered run as JSON all the same, whitespace before it while the cell runs", async () => {
    const id = uniqueId("code-buffered-body");
    const response = await apiCall(`/v1/sandboxes/${id}/code/run`, { method: "POST", json: { code: "import time\ntime.sleep(0.6)\n6 * 7" } });
    expect(response.headers.get("content-type")).toBe("application/json");
    const body = await response.text();
    expect(body).toMatch(/^ +\{/);
    expect(JSON.parse(body)).toMatchObject({ results: [{ text: "42", isMainResult: true }], executionCount: 1 });
    await apiCall(`/v1/sandboxes/${id}`, { method: "DELETE" });
  });

  it("take a streamed run's cell with them when it asked for interruptOnDisconnect", async () => {
    const id = uniqueId("code-gone-stream");
    const sandbox = getHttpSandbox(id, { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: (input, init) => worker.fetch(new Request(input, init)) });
    try {
      const context = await sandbox.createCodeContext({ language: "javascript" });
      await sandbox.runCode("var kept = 'state'", { context });
      const response = await apiCall(`/v1/sandboxes/${id}/code/run/stream`, {
        method: "POST",
        json: { contextId: context.id, code: "console.log('waiting'); await new Promise(() => {})", interruptOnDisconnect: true },
      });
      const events = readEventStream<CodeEvent>(response.body!);
      while ((await events.next()).value?.type !== "stdout");
      await events.return(undefined);
      expect(text(await whenFree(() => sandbox.runCode("kept", { context, wait: false })))).toBe("'state'");
    } finally {
      await sandbox.destroy();
    }
  });
});
