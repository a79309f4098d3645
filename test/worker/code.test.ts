/**
 * The code interpreter through the whole chain: getSandbox (Workers RPC to the Durable Object),
 * getHttpSandbox and plain requests to /v1, down to real interpreters in the local runtime's
 * container servers.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import type { CodeEvent, Execution } from "../../protocol/code.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { getHttpSandbox } from "../../src/client/http.ts";
import { CodeContextBusyError, CodeContextNotFoundError, InvalidRequestError } from "../../src/client/index.ts";
import { SandboxClient } from "../../src/client/sandbox-client.ts";
import type { SandboxRpc } from "../../src/rpc/sandbox-rpc.ts";
import { rpcTransport } from "../../src/rpc/stub-transport.ts";
import { apiCall, collect, cutAfter, eventIds, sandboxPool, uniqueId } from "./helpers.ts";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const workerFetch: typeof fetch = (input, init) => worker.fetch(new Request(input, init));
const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

const text = (execution: Execution) => execution.results.find((result) => result.isMainResult)?.text;

describe("code interpreter through getSandbox", () => {
  const sandbox = sandboxes.create("code-rpc");

  it("keeps state in a context between runs, and gives errors as results", async () => {
    const context = await sandbox.createCodeContext({ language: "python" });
    expect(context).toMatchObject({ language: "python", isDefault: false, executionCount: 0 });
    await sandbox.runCode("numbers = [1, 2, 3]", { context });
    const sum = await sandbox.runCode("sum(numbers) * 7", { context: context.id });
    expect(text(sum)).toBe("42");
    expect(sum).toMatchObject({ code: "sum(numbers) * 7", contextId: context.id, executionCount: 2, logs: { stdout: [], stderr: [] } });
    // Built on this side from the events (a callback asks for them): it carries the cell's code all the same.
    const streamed = await sandbox.runCode("print(len(numbers))", { context, onStdout: () => {} });
    expect(streamed.code).toBe("print(len(numbers))");
    expect(streamed.logs.stdout.join("")).toBe("3\n");
    const failed = await sandbox.runCode("numbers[10]", { context });
    // `message` (Cloudflare's name) repeats `value` (E2B's).
    expect(failed.error).toMatchObject({ name: "IndexError", value: "list index out of range", message: "list index out of range" });
    expect(failed.error!.traceback.at(-1)).toBe("IndexError: list index out of range");
    expect((await sandbox.listCodeContexts()).map((c) => c.id)).toContain(context.id);
    expect(await sandbox.getCodeContext(context.id)).toMatchObject({ id: context.id, executionCount: 4 });
  });

  it("feeds the callbacks as the cell runs, and resolves with the Execution they add up to", async () => {
    const seen: string[] = [];
    const execution = await sandbox.runCode(
      "import matplotlib.pyplot as plt\nprint('drawing')\nplt.plot([1, 2])\nplt.show()\nraise ValueError('after the figure')",
      {
        // print() writes the text and its newline apart: they may arrive as one chunk or two.
        onStdout: (data) => (seen.at(-1)?.startsWith("stdout:") ? (seen[seen.length - 1] += data) : seen.push(`stdout:${data}`)),
        onResult: (result) => seen.push(`result:${result.png ? "png" : "other"}`),
        onError: (error) => seen.push(`error:${error.name}:${error.message}`),
      },
    );
    expect(seen).toEqual(["stdout:drawing\n", "result:png", "error:ValueError:after the figure"]);
    expect(execution.logs.stdout.join("")).toBe("drawing\n");
    expect(execution.results).toHaveLength(1);
    expect(atob(execution.results[0]!.png!).slice(1, 4)).toBe("PNG");
    expect(execution.error).toMatchObject({ name: "ValueError", value: "after the figure", message: "after the figure" });
    // No context given: the sandbox's default python context, listed as such.
    expect((await sandbox.getCodeContext(execution.contextId)).isDefault).toBe(true);
  });

  it("streams the events of a run, and resumes a broken stream from its last event id", async () => {
    const id = uniqueId("code-resume");
    const rpc = rpcTransport(env.Sandbox.get(env.Sandbox.idFromName(id)));
    const resumes: (number | undefined)[] = [];
    let cut = false;
    const broken: SandboxRpc = {
      ...rpc,
      runCodeStream: async (code, options) => {
        const stream = await rpc.runCodeStream(code, options);
        if (cut) return stream;
        cut = true;
        return cutAfter(stream, 300);
      },
      resumeCodeStream: (executionId, options) => {
        resumes.push(options?.since);
        return rpc.resumeCodeStream(executionId, options);
      },
    };
    const client = new SandboxClient(id, { rpc: broken });
    try {
      const events: CodeEvent[] = await collect(client.runCodeStream("import time\nfor i in range(8):\n    print(f'step {i}', flush=True)\n    time.sleep(0.05)\n'done'"));
      expect(events[0]?.type).toBe("start");
      expect(events.flatMap((event) => (event.type === "stdout" ? [event.data] : [])).join("")).toBe(Array.from({ length: 8 }, (_, i) => `step ${i}\n`).join(""));
      // Contiguous ids, nothing repeated: an output event cut by the break arrives in two parts with one id.
      const ids = eventIds(events);
      expect(ids).toEqual(ids.map((_, i) => i + 1));
      expect(ids.at(-1)).toBe(events.at(-1)?.seq);
      expect(events.at(-2)).toMatchObject({ type: "result", result: { text: "'done'", isMainResult: true } });
      expect(events.at(-1)).toMatchObject({ type: "complete", executionCount: 1 });
      expect(resumes).toHaveLength(1);
      expect(resumes[0]).toBeGreaterThan(0);
    } finally {
      await client.destroy();
    }
  });

  it("interrupts the cell when the signal aborts; the context keeps its state", async () => {
    const context = await sandbox.createCodeContext();
    const controller = new AbortController();
    const reason = new Error("stop now");
    const run = sandbox.runCode("kept = 'yes'\nimport time\nprint('started', flush=True)\ntime.sleep(60)", {
      context,
      signal: controller.signal,
      onStdout: () => controller.abort(reason),
    });
    await expect(run).rejects.toBe(reason);
    // Were the cell still sleeping, this run would wait its turn for a minute.
    const after = await sandbox.runCode("kept", { context, timeout: 10_000 });
    expect(text(after)).toBe("'yes'");
    expect(after.executionCount).toBe(2);
  });

  it("interrupts a cell that runs out of time, and refuses a busy context when asked not to wait", async () => {
    const context = await sandbox.createCodeContext({ language: "javascript" });
    // Busy from its first output on, for as long as its time limit.
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const slow = sandbox.runCode("var waited = true; console.log('started'); await new Promise((resolve) => setTimeout(resolve, 60_000))", {
      context,
      timeout: 3_000,
      onStdout: () => started(),
    });
    await running;
    await expect(sandbox.runCode("1", { context, wait: false })).rejects.toBeInstanceOf(CodeContextBusyError);
    expect(await slow).toMatchObject({ interrupted: true, timedOut: true, error: { name: "InterruptedError" } });
    expect(text(await sandbox.runCode("waited", { context }))).toBe("true");
  });

  it("restarts and deletes contexts; after the container restarts, its contexts are gone", async () => {
    const own = sandboxes.create("code-restart");
    const context = await own.createCodeContext({ language: "typescript" });
    await own.runCode("const kept: number = 1", { context });
    expect(await own.restartCodeContext(context)).toMatchObject({ id: context.id, executionCount: 0 });
    expect((await own.runCode("kept", { context })).error?.name).toBe("ReferenceError");
    const other = await own.createCodeContext();
    expect(await own.deleteCodeContext(other)).toEqual({ contextId: other.id, cancelled: 0 });
    await expect(own.getCodeContext(other.id)).rejects.toBeInstanceOf(CodeContextNotFoundError);

    await own.destroy();
    await expect(own.runCode("1", { context })).rejects.toBeInstanceOf(CodeContextNotFoundError);
    expect(await own.listCodeContexts()).toEqual([]);
    await expect(own.createCodeContext({ language: "cobol" as "python" })).rejects.toBeInstanceOf(InvalidRequestError);
  });
});

describe("code contexts in the sandbox's walls", () => {
  it("see the sandbox's env vars and run under its isolation", async () => {
    const sandbox = sandboxes.create("code-walls", { isolation: "bwrap", allowNetwork: false });
    await sandbox.setEnvVars({ FROM_THE_SANDBOX: "set" });
    // In the sandbox's container: its own (small) pid numbers, /workspace, none of the host's folders.
    const python = await sandbox.runCode("import os\n(os.environ.get('FROM_THE_SANDBOX'), os.getpid() < 1000, os.getcwd(), os.path.exists('/work'))");
    expect(text(python)).toBe("('set', True, '/workspace', False)");
    const js = await sandbox.runCode("[process.env.FROM_THE_SANDBOX, process.pid < 1000]", { language: "javascript" });
    expect(text(js)).toBe("[ 'set', true ]");
  });
});

describe("code interpreter over HTTP (getHttpSandbox)", () => {
  it("offers the same API, and resumes a broken run stream", async () => {
    const id = uniqueId("code-http");
    let cut = false;
    const log: string[] = [];
    const sandbox = getHttpSandbox(id, {
      url: "http://sandbox.test",
      token: env.SANDBOX_API_TOKEN!,
      fetch: async (input, init) => {
        const request = new Request(input, init);
        log.push(`${request.method} ${new URL(request.url).pathname} ${request.headers.get("last-event-id") ?? "-"}`);
        const response = await workerFetch(request);
        if (cut || !new URL(request.url).pathname.endsWith("/code/run/stream") || !response.body) return response;
        cut = true;
        return new Response(cutAfter(response.body, 300), response);
      },
    });
    try {
      const context = await sandbox.createCodeContext({ language: "python" });
      await sandbox.runCode("import pandas as pd\nframe = pd.DataFrame({'a': [1, 2]})", { context });
      const shown = await sandbox.runCode("frame", { context });
      expect(shown.results[0]).toMatchObject({ isMainResult: true, html: expect.stringContaining("<table") });
      expect(shown.code).toBe("frame");
      const events = await collect(sandbox.runCodeStream("import time\nfor i in range(6):\n    print(i, flush=True)\n    time.sleep(0.05)", { context }));
      expect(events.flatMap((event) => (event.type === "stdout" ? [event.data] : [])).join("")).toBe("0\n1\n2\n3\n4\n5\n");
      expect(events.at(-1)).toMatchObject({ type: "complete" });
      expect(log.some((line) => /\/code\/executions\/[^/]+\/stream \d+$/.test(line))).toBe(true);
      const controller = new AbortController();
      const aborted = sandbox.runCode("import time\nprint('go', flush=True)\ntime.sleep(60)", { context, signal: controller.signal, onStdout: () => controller.abort() });
      await expect(aborted).rejects.toMatchObject({ name: "AbortError" });
      expect(text(await sandbox.runCode("len(frame)", { context, timeout: 10_000 }))).toBe("2");
    } finally {
      await sandbox.destroy();
    }
  });
});

describe("/v1 code routes", () => {
  it("create, list, run, stream, interrupt, restart and delete with plain requests", async () => {
    const base = `/v1/sandboxes/${uniqueId("code-v1")}`;
    const created = await apiCall(`${base}/code/contexts`, { method: "POST", json: { language: "python" } });
    expect(created.status).toBe(201);
    const { context } = (await created.json()) as { context: { id: string } };
    const listed = (await (await apiCall(`${base}/code/contexts`)).json()) as { contexts: { id: string }[] };
    expect(listed.contexts.map((c) => c.id)).toEqual([context.id]);

    const ran = await apiCall(`${base}/code/run`, { method: "POST", json: { code: "x = 6\nx * 7", contextId: context.id } });
    expect(ran.status).toBe(200);
    expect(await ran.json()).toMatchObject({ code: "x = 6\nx * 7", contextId: context.id, results: [{ text: "42", isMainResult: true }], executionCount: 1 });

    const stream = await apiCall(`${base}/code/run/stream`, { method: "POST", json: { code: "print('hi')\ndisplay('mid')\nx", contextId: context.id } });
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const body = await stream.text();
    // Streams open with a keepalive comment, then the run's first event.
    expect(body).toMatch(/^: keepalive\n\nid: 1\nevent: start\ndata: \{"type":"start"/);
    const events: CodeEvent[] = await collect(readEventStream<CodeEvent>(new Response(body).body!));
    expect(events.map((event) => event.type)).toEqual(["start", "stdout", "result", "result", "complete"]);

    const slow = await apiCall(`${base}/code/run/stream`, { method: "POST", json: { code: "import time\nprint('go', flush=True)\ntime.sleep(60)", contextId: context.id } });
    const reader = readEventStream<CodeEvent>(slow.body!);
    const start = (await reader.next()).value as Extract<CodeEvent, { type: "start" }>;
    await reader.next(); // the cell printed: it is running
    const interrupted = await apiCall(`${base}/code/executions/${start.executionId}/interrupt`, { method: "POST" });
    expect(await interrupted.json()).toEqual({ executionId: start.executionId, interrupted: true });
    const rest: CodeEvent[] = [];
    for await (const event of reader) rest.push(event);
    expect(rest.at(-2)).toMatchObject({ type: "error", error: { name: "KeyboardInterrupt" } });
    const { error } = rest.at(-2) as Extract<CodeEvent, { type: "error" }>;
    expect(error.message).toBe(error.value);
    expect(rest.at(-1)).toMatchObject({ type: "complete", interrupted: true });

    const restarted = await apiCall(`${base}/code/contexts/${context.id}/restart`, { method: "POST" });
    expect(await restarted.json()).toMatchObject({ context: { id: context.id, executionCount: 0 } });
    const deleted = await apiCall(`${base}/code/contexts/${context.id}`, { method: "DELETE" });
    expect(await deleted.json()).toEqual({ contextId: context.id, cancelled: 0 });
    await apiCall(base, { method: "DELETE" });
  });

  it("answers bad input with a code and its status", async () => {
    const base = `/v1/sandboxes/${uniqueId("code-v1-bad")}`;
    const cases: [string, RequestInit & { json?: unknown }, number, string][] = [
      ["/code/contexts", { method: "POST", json: { language: "ruby" } }, 400, "INVALID_REQUEST"],
      ["/code/run", { method: "POST", body: "{oops", headers: { "content-type": "application/json" } }, 400, "INVALID_JSON"],
      ["/code/run", { method: "POST", json: { contextId: "ctx_x" } }, 400, "INVALID_REQUEST"],
      ["/code/run", { method: "POST", json: { code: "1", contextId: "ctx_missing" } }, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["/code/run/stream", { method: "POST", json: { code: "1", contextId: "ctx_missing" } }, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["/code/contexts/ctx_missing", { method: "DELETE" }, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["/code/contexts/ctx_missing/restart", { method: "POST" }, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["/code/executions/run_missing/stream", {}, 404, "CODE_EXECUTION_NOT_FOUND"],
      ["/code/executions/run_missing/interrupt", { method: "POST" }, 404, "CODE_EXECUTION_NOT_FOUND"],
      ["/code/executions/run_missing/stream", { headers: { "last-event-id": "x" } }, 400, "INVALID_REQUEST"],
    ];
    for (const [path, init, status, code] of cases) {
      const response = await apiCall(base + path, init);
      expect({ path, status: response.status, code: ((await response.json()) as { code: string }).code }).toEqual({ path, status, code });
    }
    await apiCall(base, { method: "DELETE" });
  });
});
