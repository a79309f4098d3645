/**
 * The framework adapters inside a Worker, reaching sandboxes through the Durable Object binding
 * (`{ binding: env.Sandbox, sandboxId }`) in workerd: the Mastra sandbox, the deepagents backend
 * and the edge exec-hook sandbox, each on the calls an agent makes first.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { EdgeDeepAgentsSandbox } from "../../src/adapters/deepagents/index.ts";
import { ExitError, lookupFactory, TimeoutError, TransportError } from "../../src/adapters/exec-hook/index.ts";
import { EdgeSandbox } from "../../src/adapters/mastra/index.ts";
import { sandboxPool } from "./helpers.ts";

const pool = sandboxPool();
afterAll(pool.destroyAll);

/** A binding connection to a fresh sandbox, destroyed after the file. */
function bound(label: string): { binding: typeof env.Sandbox; sandboxId: string } {
  return { binding: env.Sandbox, sandboxId: pool.create(label).id };
}

describe("Mastra EdgeSandbox over the binding", () => {
  it("starts, runs commands with safe args, and follows spawned processes", async () => {
    const sandbox = new EdgeSandbox({ ...bound("mastra-bound"), env: { WHO: "worker" } });
    await sandbox._start();
    expect(sandbox.status).toBe("running");
    expect(sandbox.getInstructions()).toContain(sandbox.workingDirectory!);
    expect(await sandbox.executeCommand("printf '%s|%s' \"$WHO\"", ["$(id) x"])).toMatchObject({ exitCode: 0, stdout: "worker|$(id) x" });
    expect(await sandbox.executeCommand("sleep 10", [], { timeout: 100 })).toMatchObject({ exitCode: 124, timedOut: true });

    const echo = await sandbox.processes.spawn("read line; echo got $line");
    await echo.sendStdin("hi\n");
    expect(await echo.wait()).toMatchObject({ exitCode: 0, stdout: "got hi\n" });
    await expect(echo.sendStdin("late")).rejects.toThrow(/already exited/);

    const sleeper = await sandbox.processes.spawn("sleep 30");
    expect((await sandbox.processes.list()).find((p) => p.pid === sleeper.pid)).toMatchObject({ running: true });
    expect(await sandbox.processes.kill(sleeper.pid)).toBe(true);
    expect(sleeper.exitCode).toBe(137);
  });

  it("offers the process's stdout as a Node stream", async () => {
    const sandbox = new EdgeSandbox(bound("mastra-reader"));
    const handle = await sandbox.processes.spawn("printf 'line 1\\nline 2\\n'");
    let read = "";
    for await (const chunk of handle.reader) read += String(chunk);
    expect(read).toBe("line 1\nline 2\n");
  });
});

describe("deepagents EdgeDeepAgentsSandbox over the binding", () => {
  it("executes, moves bytes, and runs the derived file methods", async () => {
    const sandbox = await EdgeDeepAgentsSandbox.create({ ...bound("deep-bound"), initialFiles: { "a.txt": "one\ntwo\n" } });
    const root = sandbox.workspace!;
    expect(await sandbox.execute("cat a.txt; echo err >&2; exit 2")).toEqual({ output: "one\ntwo\nerr\n", exitCode: 2, truncated: false });
    const bytes = new Uint8Array(256).map((_, i) => i);
    expect(await sandbox.uploadFiles([["b.bin", bytes]])).toEqual([{ path: "b.bin", error: null }]);
    const [downloaded, missing] = await sandbox.downloadFiles(["b.bin", "none"]);
    expect([...downloaded!.content!]).toEqual([...bytes]);
    expect(missing!.error).toBe("file_not_found");
    expect((await sandbox.read(`${root}/a.txt`)).content).toBe("     1\tone\n     2\ttwo\n");
    expect(await sandbox.edit(`${root}/a.txt`, "two", "three")).toMatchObject({ occurrences: 1 });
    expect((await sandbox.grep("three", root)).matches).toEqual([{ path: `${root}/a.txt`, line: 2, text: "three" }]);
    expect((await sandbox.glob("*.txt", root)).files?.map((f) => f.path)).toEqual(["a.txt"]);
    await sandbox.close();
    expect(sandbox.isRunning).toBe(false);
  });
});

describe("exec-hook sandboxes in a Worker", () => {
  it("edge round-trips all 256 byte values and tells failures apart", async () => {
    const sandbox = lookupFactory("edge")(bound("hook-bound"));
    const bytes = new Uint8Array(256).map((_, i) => i);
    const echoed = await sandbox.spawn({ command: "cat", stdin: bytes });
    expect(echoed.error).toBeUndefined();
    expect([...echoed.stdout]).toEqual([...bytes]);
    expect((await sandbox.spawn({ command: "sh", args: ["-c", "exit 4"] })).error).toEqual(expect.any(ExitError));
    expect((await sandbox.spawn({ command: "sleep", args: ["10"], timeoutMs: 100 })).error).toEqual(expect.any(TimeoutError));
  });

  it("direct has no child processes here: a TransportError, not a crash", async () => {
    const response = await lookupFactory("direct")(undefined).spawn({ command: "true" });
    expect(response.error).toBeInstanceOf(TransportError);
  });
});
