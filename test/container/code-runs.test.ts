/**
 * What a run may ask for and what ends it, at the container server, for every language: its own env
 * (set for the cell, put back after), language aliases, callers that go away (a buffered caller's
 * cell is interrupted; a streamed run with interruptOnDisconnect too), and interpreters that die
 * mid-cell (process.exit, os._exit, a segfault), which restart with the run saying state was lost.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CodeEvent, CodeLanguage } from "../../protocol/code.ts";
import { readEventStream } from "../../protocol/sse.ts";
import { createContext, mainResult, run, stdoutText } from "./code-helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

/** Resolves once `path` exists; fails the test after `ms`. */
async function appears(path: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > until) throw new Error(`${path} did not appear within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a run's own env", () => {
  const reads: Record<CodeLanguage, string> = {
    python: "import os, subprocess\nprint(os.environ.get('RUN_ONLY'), os.environ.get('CTX_VAR'), subprocess.run(['printenv', 'RUN_ONLY'], capture_output=True, text=True).stdout.strip())",
    javascript: "console.log(process.env.RUN_ONLY, process.env.CTX_VAR, require('node:child_process').execSync('printenv RUN_ONLY || true').toString().trim())",
    typescript: "console.log(process.env.RUN_ONLY, process.env.CTX_VAR as string, require('node:child_process').execSync('printenv RUN_ONLY || true').toString().trim())",
    bash: "echo ${RUN_ONLY:-None} $CTX_VAR $(printenv RUN_ONLY)",
  };
  for (const language of ["python", "javascript", "typescript", "bash"] as const) {
    it(`is set for the cell in ${language} (its subprocesses too), overrides the context's, and is put back after`, async () => {
      const context = await createContext(sandbox, { language, env: { CTX_VAR: "context" } });
      const withEnv = await run(sandbox, context.id, reads[language], { env: { RUN_ONLY: "run", CTX_VAR: "override" } });
      expect(withEnv.error).toBeUndefined();
      expect(withEnv.code).toBe(reads[language]);
      expect(stdoutText(withEnv)).toBe("run override run\n");
      const after = await run(sandbox, context.id, reads[language]);
      const unset = language === "python" || language === "bash" ? "None" : "undefined";
      expect(stdoutText(after).split(/\s+/).slice(0, 2)).toEqual([unset, "context"]);
    });
  }

  it("refuses names no environment can hold", async () => {
    const reply = await sandbox.post("/api/code/run", { code: "1", env: { "A=B": "x" } });
    expect(reply).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
  });
});

describe("language aliases", () => {
  it("name the same languages for contexts and for default runs, reported by their full names", async () => {
    for (const [alias, language] of [["py", "python"], ["js", "javascript"], ["ts", "typescript"], ["sh", "bash"]] as const) {
      const context = await createContext(sandbox, { language: alias as CodeLanguage });
      expect(context.language).toBe(language);
      const execution = await run(sandbox, undefined, language === "bash" ? "echo 2" : "1 + 1", { language: alias });
      expect(execution.language).toBe(language);
      expect(mainResult(execution)?.text ?? stdoutText(execution).trim()).toBe("2");
      // With a context, an alias of its own language matches it.
      expect((await run(sandbox, context.id, language === "bash" ? "true" : "1", { language: alias })).error).toBeUndefined();
    }
  });
});

describe("callers that go away", () => {
  it("interrupt a buffered run whose caller disconnects; the context keeps its state and is free", async () => {
    const context = await createContext(sandbox, { language: "python" });
    await run(sandbox, context.id, "kept = 'state'");
    const marker = join(sandbox.workspace, "buffered-interrupted");
    const controller = new AbortController();
    const dropped = fetch(`${sandbox.url}/api/code/run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contextId: context.id, code: `import time\ntry:\n    open('started', 'w').close()\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    open(${JSON.stringify(marker)}, 'w').close()\n    raise` }),
      signal: controller.signal,
    });
    await appears(join(sandbox.workspace, "started"));
    controller.abort();
    await expect(dropped).rejects.toThrow();
    await appears(marker);
    // Free at once (wait: false would fail on a busy context), with its state.
    expect(mainResult(await run(sandbox, context.id, "kept", { wait: false }))?.text).toBe("'state'");
  });

  it("interrupt a streamed run with interruptOnDisconnect as soon as its reader goes, in every language", async () => {
    const cells: Record<CodeLanguage, string> = {
      python: "print('started', flush=True)\nimport time\ntime.sleep(60)",
      javascript: "console.log('started'); await new Promise(() => {})",
      typescript: "console.log('started'); while (true) {}",
      bash: "echo started; sleep 60",
    };
    for (const language of ["python", "javascript", "typescript", "bash"] as const) {
      const context = await createContext(sandbox, { language });
      const controller = new AbortController();
      const response = await fetch(`${sandbox.url}/api/code/run/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ contextId: context.id, code: cells[language], interruptOnDisconnect: true }),
        signal: controller.signal,
      });
      let executionId = "";
      try {
        for await (const event of readEventStream<CodeEvent>(response.body!)) {
          if (event.type === "start") executionId = event.executionId;
          if (event.type === "stdout") controller.abort();
        }
      } catch {
        // the abort
      }
      const rest: CodeEvent[] = [];
      const resumed = await fetch(`${sandbox.url}/api/code/executions/${executionId}/stream`);
      for await (const event of readEventStream<CodeEvent>(resumed.body!)) rest.push(event);
      expect({ language, complete: rest.at(-1) }).toMatchObject({ language, complete: { type: "complete", interrupted: true } });
      expect(rest.at(-1)).not.toHaveProperty("contextRestarted");
    }
  });
});

describe("interpreters that die mid-cell", () => {
  const deaths: [CodeLanguage, string, string][] = [
    ["javascript", "console.log('bye'); process.exit(3)", "exited with code 3"],
    ["typescript", "const code: number = 5; process.exit(code)", "exited with code 5"],
    ["javascript", "process.kill(process.pid, 'SIGSEGV')", "was killed by SIGSEGV"],
    ["python", "import os\nos._exit(7)", "exited with code 7"],
    ["python", "import ctypes\nctypes.string_at(0)", "was killed by SIGSEGV"],
  ];
  for (const [language, code, how] of deaths) {
    it(`end the cell and restart the ${language} context: ${code.split("\n").at(-1)}`, async () => {
      const context = await createContext(sandbox, { language });
      await run(sandbox, context.id, language === "python" ? "lost = 1" : "var lost = 1");
      const died = await run(sandbox, context.id, code);
      expect(died).toMatchObject({ contextRestarted: true, error: { name: "ContextRestarted" } });
      expect(died.error!.value).toContain(how);
      expect(died.error!.value).toContain("state is gone");
      const after = await run(sandbox, context.id, "typeof lost === 'undefined' ? 'fresh' : 'kept'".replace(/.*/, language === "python" ? "'lost' in dir()" : "typeof lost"));
      expect(mainResult(after)?.text).toBe(language === "python" ? "False" : "'undefined'");
      expect(after.executionCount).toBe(1);
    });
  }
});
