/**
 * Code contexts through their life at the container server: interrupts and time limits (the state
 * survives), cells that will not stop (the interpreter is killed and restarted, and the run says
 * so), restart, delete, default contexts, one cell at a time under concurrent runs, resuming a
 * broken stream, bounded output, bad input, and the sandbox's env, sessions and isolation.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CodeEvent } from "../../protocol/code.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { serverAssetPath } from "../../container/server-assets.ts";
import { createContext, mainResult, run, runReply, stdoutText, streamRun } from "./code-helpers.ts";
import { call } from "./helpers.ts";
import { bwrapUnavailableReason, startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));
/** For cells that never stop: a short grace before their interpreter is killed (the others get the default, 3 s). */
const STUCK_GRACE_MS = 500;
let sandbox: SandboxServer;
let impatient: SandboxServer;

beforeAll(async () => {
  [sandbox, impatient] = await Promise.all([startSandbox(), startSandbox({ limits: { codeInterruptGraceMs: STUCK_GRACE_MS } })]);
});
afterAll(() => Promise.all([sandbox.close(), impatient.close()]));

/** Starts a streamed run, interrupts it once `ready` says so, and returns every event. */
async function interruptedRun(contextId: string, code: string, ready: (event: CodeEvent) => boolean): Promise<CodeEvent[]> {
  const response = await fetch(`${sandbox.url}/api/code/run/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contextId, code }),
  });
  const events: CodeEvent[] = [];
  let executionId = "";
  let interrupted = false;
  for await (const event of readEventStream<CodeEvent>(response.body!)) {
    events.push(event);
    if (event.type === "start") executionId = event.executionId;
    if (!interrupted && ready(event)) {
      interrupted = true;
      const reply = await sandbox.post(`/api/code/executions/${executionId}/interrupt`, {});
      expect(reply.body).toMatchObject({ executionId, interrupted: true });
    }
  }
  return events;
}

/**
 * Submits a streamed run and resolves once the server has it (its reply has begun: the run holds its
 * place in the context's queue); `events` is every event of the run, once it is over.
 */
async function submitStreamed(contextId: string, code: string): Promise<{ events: Promise<CodeEvent[]> }> {
  const response = await fetch(`${sandbox.url}/api/code/run/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ contextId, code }),
  });
  const collect = async () => {
    const events: CodeEvent[] = [];
    for await (const event of readEventStream<CodeEvent>(response.body!)) events.push(event);
    return events;
  };
  return { events: collect() };
}

/** Python that waits until a file named `gate` exists in its cwd (the workspace): a cell that runs until the test lets it end. */
const untilGate = (gate: string) => `import os, time\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.02)\n`;
const openGate = (gate: string) => sandbox.exec({ command: `touch ${gate}` });

const completeOf = (events: CodeEvent[]) => events.find((event) => event.type === "complete");
const errorOf = (events: CodeEvent[]) => events.find((event) => event.type === "error");

describe("interrupts and time limits", () => {
  it("interrupt a Python cell with KeyboardInterrupt and keep the context's state", async () => {
    const context = await createContext(sandbox, { language: "python" });
    const events = await interruptedRun(context.id, "kept = 'still here'\nimport time\nprint('waiting', flush=True)\nwhile True:\n    time.sleep(0.05)", (e) => e.type === "stdout");
    expect(errorOf(events)).toMatchObject({ error: { name: "KeyboardInterrupt" } });
    expect(completeOf(events)).toMatchObject({ interrupted: true });
    expect(completeOf(events)).not.toHaveProperty("contextRestarted");
    expect(mainResult(await run(sandbox, context.id, "kept"))?.text).toBe("'still here'");
  });

  it("interrupt a busy JavaScript loop and an endless await, keeping the state", async () => {
    const context = await createContext(sandbox, { language: "javascript" });
    const loop = await interruptedRun(context.id, "var kept = 7;\nconsole.log('looping');\nwhile (true) {}", (e) => e.type === "stdout");
    expect(errorOf(loop)).toMatchObject({ error: { name: "InterruptedError", value: "Script execution was interrupted" } });
    const wait = await interruptedRun(context.id, "console.log('waiting');\nawait new Promise(() => {})", (e) => e.type === "stdout");
    expect(completeOf(wait)).toMatchObject({ interrupted: true });
    expect(mainResult(await run(sandbox, context.id, "kept"))?.text).toBe("7");
  });

  it("interrupt JavaScript cells the moment they start, never losing the context", async () => {
    // An interrupt that lands as a cell enters or leaves its run must stop the cell, not the interpreter.
    const context = await createContext(sandbox, { language: "javascript" });
    await run(sandbox, context.id, "var kept = 'still here'");
    for (let round = 0; round < 20; round++) {
      for (const code of ["while (true) {}", "await new Promise(() => {})"]) {
        const events = await interruptedRun(context.id, code, (e) => e.type === "start");
        expect(completeOf(events), `${code}, round ${round}`).toMatchObject({ interrupted: true });
        expect(completeOf(events), `${code}, round ${round}`).not.toHaveProperty("contextRestarted");
        expect(errorOf(events)?.error.name).toBe("InterruptedError");
      }
    }
    expect(mainResult(await run(sandbox, context.id, "kept"))?.text).toBe("'still here'");
  });

  it("interrupt a cell that runs out of time, and say it timed out", async () => {
    const context = await createContext(sandbox, { language: "python" });
    await run(sandbox, context.id, "before = 1");
    // The sleep outlasts the test: only the timeout's interrupt can end the cell.
    const execution = await run(sandbox, context.id, "import time\ntime.sleep(1000)", { timeout: 300 });
    expect(execution).toMatchObject({ interrupted: true, timedOut: true, error: { name: "KeyboardInterrupt" } });
    expect(execution.contextRestarted).toBeUndefined();
    expect(execution.error!.traceback).toContain("    time.sleep(1000)");
    expect(mainResult(await run(sandbox, context.id, "before"))?.text).toBe("1");
  });

  it("kill and restart a context whose cell ignores its interrupt, and say so", async () => {
    const python = await createContext(impatient, { language: "python" });
    await run(impatient, python.id, "lost = True");
    const stuck = await run(impatient, python.id, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", { timeout: 200 });
    expect(stuck).toMatchObject({ interrupted: true, timedOut: true, contextRestarted: true, error: { name: "ContextRestarted" } });
    expect(stuck.error!.value).toContain(`did not stop within ${STUCK_GRACE_MS} ms`);
    // The same context, a fresh interpreter: the state is gone, the numbering starts again.
    const after = await run(impatient, python.id, "lost");
    expect(after.error?.name).toBe("NameError");
    expect(after.executionCount).toBe(1);

    const js = await createContext(impatient, { language: "javascript" });
    const blocked = await run(impatient, js.id, "require('node:child_process').execSync('sleep 30')", { timeout: 200 });
    expect(blocked).toMatchObject({ contextRestarted: true, error: { name: "ContextRestarted" } });
    expect(mainResult(await run(impatient, js.id, "1 + 1"))?.text).toBe("2");
  });

  it("restart a context whose interpreter died during a cell", async () => {
    const context = await createContext(sandbox, { language: "python" });
    const died = await run(sandbox, context.id, "import os\nos._exit(3)");
    expect(died).toMatchObject({ contextRestarted: true, error: { name: "ContextRestarted" } });
    expect(died.error!.value).toContain("exited with code 3");
    expect(mainResult(await run(sandbox, context.id, "'alive'"))?.text).toBe("'alive'");
  });
});

describe("contexts", () => {
  it("restart with a fresh interpreter under the same id", async () => {
    const context = await createContext(sandbox, { language: "python" });
    await run(sandbox, context.id, "value = 1");
    const reply = await sandbox.post(`/api/code/contexts/${context.id}/restart`, {});
    expect(reply.body.context).toMatchObject({ id: context.id, executionCount: 0 });
    expect((await run(sandbox, context.id, "value")).error?.name).toBe("NameError");
  });

  it("are gone once deleted, and a waiting run ends with the delete", async () => {
    const context = await createContext(sandbox, { language: "python" });
    // Both runs are in the context (one running or about to, one waiting) before the delete.
    const running = await submitStreamed(context.id, "import time\ntime.sleep(30)");
    const waiting = await submitStreamed(context.id, "'never'");
    const deleted = await call(sandbox.url, "DELETE", `/api/code/contexts/${context.id}`);
    expect(deleted.body).toMatchObject({ contextId: context.id, cancelled: 2 });
    expect(errorOf(await running.events)?.error.name).toBe("ContextDeleted");
    expect(errorOf(await waiting.events)?.error.name).toBe("ContextDeleted");
    const after = await runReply(sandbox, { contextId: context.id, code: "1" });
    expect(after.status).toBe(404);
    expect(after.body.code).toBe("CODE_CONTEXT_NOT_FOUND");
    expect((await sandbox.get("/api/code/contexts")).body.contexts.map((c: { id: string }) => c.id)).not.toContain(context.id);
  });

  it("run one cell at a time: a second run waits its turn, or fails fast when asked not to wait", async () => {
    const context = await createContext(sandbox, { language: "python" });
    // The first cell holds the context until the test opens its gate.
    const gate = `gate-${context.id}`;
    const first = await submitStreamed(context.id, `${untilGate(gate)}order = ['first']`);
    const busy = await runReply(sandbox, { contextId: context.id, code: "1", wait: false });
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe("CODE_CONTEXT_BUSY");
    const second = await submitStreamed(context.id, "order.append('second')\norder");
    await openGate(gate);
    const secondEvents = await second.events;
    expect(secondEvents.find((event) => event.type === "result" && event.result.isMainResult)).toMatchObject({ result: { text: "['first', 'second']" } });
    expect(completeOf(await first.events)!.executionCount + 1).toBe(completeOf(secondEvents)!.executionCount);
  });

  it("run 20 cells across 10 contexts at once, each context keeping its own state", async () => {
    const contexts = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createContext(sandbox, { language: i % 2 === 0 ? "python" : "javascript" })),
    );
    const runs = contexts.flatMap((context, i) => {
      const set = context.language === "python" ? `mine = ${i}` : `var mine = ${i}`;
      return [run(sandbox, context.id, set), run(sandbox, context.id, "mine * 10")];
    });
    const executions = await Promise.all(runs);
    contexts.forEach((context, i) => {
      const [set, read] = [executions[i * 2]!, executions[i * 2 + 1]!];
      expect(set.error).toBeUndefined();
      expect(mainResult(read)?.text).toBe(String(i * 10));
      expect([set.executionCount, read.executionCount]).toEqual([1, 2]);
      expect(read.contextId).toBe(context.id);
    });
    await Promise.all(contexts.map((context) => call(sandbox.url, "DELETE", `/api/code/contexts/${context.id}`)));
  });

  it("give each language a default context, made on first use and again after a delete", async () => {
    const first = await run(sandbox, undefined, "default_state = 'py'");
    const again = await run(sandbox, undefined, "default_state");
    expect(mainResult(again)?.text).toBe("'py'");
    expect(again.contextId).toBe(first.contextId);
    const js = await run(sandbox, undefined, "typeof default_state", { language: "javascript" });
    expect(js.contextId).not.toBe(first.contextId);
    expect(mainResult(js)?.text).toBe("'undefined'");
    const listed = (await sandbox.get("/api/code/contexts")).body.contexts;
    expect(listed.find((c: { id: string }) => c.id === first.contextId)).toMatchObject({ language: "python", isDefault: true });
    await call(sandbox.url, "DELETE", `/api/code/contexts/${first.contextId}`);
    const fresh = await run(sandbox, undefined, "1");
    expect(fresh.contextId).not.toBe(first.contextId);
  });
});

describe("streams and output", () => {
  it("resume a broken stream after its Last-Event-ID, while running and after the end", async () => {
    const context = await createContext(sandbox, { language: "python" });
    const code = "import time\nfor i in range(6):\n    print(f'line {i}', flush=True)\n    time.sleep(0.1)\n'done'";
    const controller = new AbortController();
    const response = await fetch(`${sandbox.url}/api/code/run/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contextId: context.id, code }),
      signal: controller.signal,
    });
    const seen: CodeEvent[] = [];
    try {
      for await (const event of readEventStream<CodeEvent>(response.body!, controller.signal)) {
        seen.push(event);
        if (seen.length === 3) controller.abort();
      }
    } catch {
      // the cut
    }
    expect(seen).toHaveLength(3);
    const executionId = (seen[0] as Extract<CodeEvent, { type: "start" }>).executionId;
    const rest = await streamRun(sandbox.url, undefined, `/api/code/executions/${executionId}/stream`, { "last-event-id": String(seen[2]!.seq) });
    const all = [...seen, ...rest];
    expect(all.map((event) => event.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.filter((event) => event.type === "stdout").map((event) => (event as { data: string }).data).join("")).toBe(
      Array.from({ length: 6 }, (_, i) => `line ${i}\n`).join(""),
    );
    expect(all.at(-1)).toMatchObject({ type: "complete" });
    // Once over, the run is still there for a while: `?since=` gives its last events.
    const tail = await streamRun(sandbox.url, undefined, `/api/code/executions/${executionId}/stream?since=${all.length - 2}`);
    expect(tail.map((event) => event.type)).toEqual(["result", "complete"]);
  });

  it("bound what a buffered run keeps, and say it was cut", async () => {
    const context = await createContext(sandbox, { language: "python" });
    const execution = await run(sandbox, context.id, "import sys\nfor _ in range(2000):\n    sys.stdout.write('x' * 1000)\n'end'", { maxOutputBytes: 64 * 1024 });
    expect(stdoutText(execution).length).toBe(64 * 1024);
    expect(execution.truncated).toBe(true);
    expect(mainResult(execution)?.text).toBe("'end'");
  });
});

describe("bad input", () => {
  it("is refused with a code and the right status", async () => {
    const context = await createContext(sandbox, { language: "python" });
    const cases: [string, string, unknown, number, string][] = [
      ["POST", "/api/code/contexts", { language: "cobol" }, 400, "INVALID_REQUEST"],
      ["POST", "/api/code/contexts", "{not json", 400, "INVALID_JSON"],
      ["POST", "/api/code/contexts", { cwd: "no/such/dir" }, 422, "SPAWN_FAILED"],
      ["POST", "/api/code/run", { contextId: context.id }, 400, "INVALID_REQUEST"],
      ["POST", "/api/code/run", { code: "1", language: "cobol" }, 400, "INVALID_REQUEST"],
      ["POST", "/api/code/run", { code: "1", contextId: context.id, timeout: -5 }, 400, "INVALID_REQUEST"],
      ["POST", "/api/code/run", { code: "1", contextId: context.id, language: "javascript" }, 400, "INVALID_REQUEST"],
      ["POST", "/api/code/run", { code: "1", contextId: "ctx_missing" }, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["POST", "/api/code/run/stream", { code: "1", contextId: "ctx_missing" }, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["GET", "/api/code/contexts/ctx_missing", undefined, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["DELETE", "/api/code/contexts/ctx_missing", undefined, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["POST", "/api/code/contexts/ctx_missing/restart", {}, 404, "CODE_CONTEXT_NOT_FOUND"],
      ["GET", "/api/code/executions/run_missing/stream", undefined, 404, "CODE_EXECUTION_NOT_FOUND"],
      ["POST", "/api/code/executions/run_missing/interrupt", {}, 404, "CODE_EXECUTION_NOT_FOUND"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const reply = await call(sandbox.url, method, path, body);
      expect({ method, path, status: reply.status, code: reply.body?.code }).toEqual({ method, path, status, code });
    }
  });

  it("names what to install when the interpreter is missing", async () => {
    const broken = await startSandbox({ interpreters: { python: "/nonexistent/python3" } });
    try {
      const reply = await broken.post("/api/code/contexts", { language: "python" });
      expect(reply.status).toBe(501);
      expect(reply.body).toMatchObject({ code: "INTERPRETER_UNAVAILABLE" });
      expect(reply.body.message).toMatch(/apt-get install -y python3|SANDBOX_PYTHON/);
    } finally {
      await broken.close();
    }
  });
});

describe("the sandbox around a context", () => {
  it("starts contexts in the sandbox's env, a session's cwd and env, and their own env", async () => {
    await sandbox.post("/api/env", { vars: { SANDBOX_WIDE: "everywhere" } });
    mkdirSync(join(sandbox.workspace, "project"));
    await sandbox.post("/api/session", { id: "code-session", cwd: "project", env: { SESSION_VAR: "in-session" } });
    const context = await createContext(sandbox, { language: "python", sessionId: "code-session", env: { OWN_VAR: "own" } });
    expect(context).toMatchObject({ cwd: join(sandbox.workspace, "project"), sessionId: "code-session" });
    const seen = await run(sandbox, context.id, "import os\n(os.getcwd(), os.environ['SANDBOX_WIDE'], os.environ['SESSION_VAR'], os.environ['OWN_VAR'])");
    expect(mainResult(seen)?.text).toBe(`('${join(sandbox.workspace, "project")}', 'everywhere', 'in-session', 'own')`);
  });

  const bwrap = bwrapUnavailableReason();
  it.skipIf(bwrap !== undefined)("confines contexts with the sandbox's isolation", async () => {
    const isolated = await startSandbox({ isolation: "bwrap" });
    try {
      const python = await createContext(isolated, { language: "python" });
      const py = await run(isolated, python.id, [
        "import os",
        "try:",
        "    open('/etc/written-by-a-cell', 'w')",
        "    outcome = 'wrote'",
        "except OSError as error:",
        "    outcome = type(error).__name__",
        // Of the host's checkout it sees the driver's own files only, bound read-only where they lie.
        `(os.getpid() < 10, outcome, os.path.exists(${JSON.stringify(join(CHECKOUT, "package.json"))}), sorted(os.listdir(${JSON.stringify(dirname(serverAssetPath("pythonDriver")))})))`,
      ].join("\n"));
      expect(mainResult(py)?.text).toBe("(True, 'OSError', False, ['python-charts.py', 'python-driver.py'])");
      const js = await createContext(isolated, { language: "javascript" });
      const node = await run(isolated, js.id, "require('node:fs').readdirSync('/proc').filter((name) => /^\\d+$/.test(name)).length < 10");
      expect(mainResult(node)?.text).toBe("true");
    } finally {
      await isolated.close();
    }
  });
});
