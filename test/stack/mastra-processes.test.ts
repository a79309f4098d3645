/**
 * EdgeProcessManager and EdgeProcessHandle against the real stack: the ProcessHandle contract
 * (pid, accumulating output, exitCode without waiting, idempotent wait, kill, stdin) and the
 * manager's spawn/list/get/kill, including processes another client started, concurrent handles,
 * env isolation between spawns, timeouts and a sandbox destroyed from outside.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EdgeSandbox } from "../../src/adapters/mastra/index.ts";
import { httpConnection } from "./helpers.ts";

let sandbox: EdgeSandbox;
beforeAll(async () => {
  sandbox = new EdgeSandbox(httpConnection("mastra-procs"));
  await sandbox._start();
});
afterAll(() => sandbox.client.destroy());

/** Another client of the same sandbox, as a second app process would have. */
function otherClient(): EdgeSandbox {
  return new EdgeSandbox({ ...httpConnection("unused"), sandboxId: sandbox.id });
}

// The tests share one sandbox but not their processes: they run at once.
describe.concurrent("spawn and the handle", () => {
  it("returns a handle at once; output accumulates as it arrives; exitCode is set on exit without a wait", async ({ expect }) => {
    // The process goes on only when told (a line on stdin): "first" alone is a state that lasts.
    const handle = await sandbox.processes.spawn("echo first; read go; echo second; exit 4");
    expect(handle.pid).toEqual(expect.any(String));
    expect(handle.exitCode).toBeUndefined();
    await expect.poll(() => handle.stdout).toBe("first\n");
    expect(handle.exitCode).toBeUndefined();
    await handle.sendStdin("go\n");
    await expect.poll(() => handle.exitCode, { timeout: 10_000 }).toBe(4);
    expect(handle.stdout).toBe("first\nsecond\n");
  });

  it("streams to the spawn's callbacks and runs in the spawn's cwd", async () => {
    await sandbox.executeCommand("mkdir -p spawned/here");
    const seen: string[] = [];
    const handle = await sandbox.processes.spawn("pwd; echo warn >&2", {
      cwd: "spawned/here",
      onStdout: (data) => seen.push(`out:${data}`),
      onStderr: (data) => seen.push(`err:${data}`),
    });
    await handle.wait();
    expect(seen.sort()).toEqual([`err:warn\n`, `out:${sandbox.workingDirectory}/spawned/here\n`]);
  });

  it("waits idempotently, streaming to the callbacks of each wait", async () => {
    const handle = await sandbox.processes.spawn("sleep 0.2; echo a; echo b >&2");
    const chunks: string[] = [];
    const [first, second] = await Promise.all([
      handle.wait({ onStdout: (data) => chunks.push(`out:${data}`), onStderr: (data) => chunks.push(`err:${data}`) }),
      handle.wait(),
    ]);
    expect(first).toEqual(second);
    expect(first).toMatchObject({ success: true, exitCode: 0, stdout: "a\n", stderr: "b\n" });
    expect(chunks.sort()).toEqual(["err:b\n", "out:a\n"]);
    expect(await handle.wait()).toEqual(first);
  });

  it("sends stdin while running and rejects it once the process exited", async () => {
    const handle = await sandbox.processes.spawn("head -n 2");
    await handle.sendStdin("line 1\n");
    await handle.sendStdin("line 2\n");
    const result = await handle.wait();
    expect(result.stdout).toBe("line 1\nline 2\n");
    await expect(handle.sendStdin("late\n")).rejects.toThrow(/already exited with code 0/);
    await expect(handle.closeStdin()).rejects.toThrow(/already exited/);
  });

  it("closes stdin on request, and a spawn with stdinMode ignore reads EOF at once", async () => {
    const cat = await sandbox.processes.spawn("cat; echo done");
    await cat.sendStdin("x");
    await cat.closeStdin();
    expect((await cat.wait()).stdout).toBe("xdone\n");
    const ignored = await sandbox.processes.spawn("cat; echo eof", { stdinMode: "ignore" });
    expect((await ignored.wait()).stdout).toBe("eof\n");
    await expect(ignored.sendStdin("x")).rejects.toThrow();
  });

  it("kills a running process (true), and a finished one not (false)", async () => {
    const sleeper = await sandbox.processes.spawn("sleep 30");
    expect(await sleeper.kill()).toBe(true);
    expect(await sleeper.wait()).toMatchObject({ success: false, killed: true, exitCode: 137 });
    expect(await sleeper.kill()).toBe(false);

    const quick = await sandbox.processes.spawn("true");
    await quick.wait();
    expect(await quick.kill()).toBe(false);
  });

  it("ends a process at its timeout: sleep 10 with 100 ms stops early and non-zero", async () => {
    const handle = await sandbox.processes.spawn("sleep 10", { timeout: 100 });
    const result = await handle.wait();
    expect(result.executionTimeMs).toBeLessThan(5_000);
    expect(result).toMatchObject({ success: false, exitCode: 124, timedOut: true });
  });

  it("kills the process when the spawn's abort signal fires", async () => {
    const controller = new AbortController();
    const handle = await sandbox.processes.spawn("sleep 30", { abortSignal: controller.signal });
    controller.abort();
    expect(await handle.wait()).toMatchObject({ killed: true, exitCode: 137 });
  });

  it("keeps env apart between spawns", async () => {
    const [a, b] = await Promise.all([
      sandbox.processes.spawn('echo "${ONLY_A:-none} ${ONLY_B:-none}"', { env: { ONLY_A: "a" } }),
      sandbox.processes.spawn('echo "${ONLY_A:-none} ${ONLY_B:-none}"', { env: { ONLY_B: "b" } }),
    ]);
    expect((await a.wait()).stdout).toBe("a none\n");
    expect((await b.wait()).stdout).toBe("none b\n");
    const c = await sandbox.processes.spawn('echo "${ONLY_A:-none} ${ONLY_B:-none}"');
    expect((await c.wait()).stdout).toBe("none none\n");
  });

  it("runs many handles at once, each with its own output and exit", async () => {
    const handles = await Promise.all(
      Array.from({ length: 6 }, (_, i) => sandbox.processes.spawn(`for n in 1 2 3; do echo p${i}-$n; sleep 0.05; done; exit ${i}`)),
    );
    const results = await Promise.all(handles.map((handle) => handle.wait()));
    results.forEach((result, i) => {
      expect(result.stdout).toBe(`p${i}-1\np${i}-2\np${i}-3\n`);
      expect(result.exitCode).toBe(i);
    });
    expect(new Set(handles.map((handle) => handle.pid)).size).toBe(6);
  });
});

describe.concurrent("the process manager", () => {
  it("lists processes from the sandbox, and still after a kill, as ended", async () => {
    const handle = await sandbox.processes.spawn("sleep 30");
    const listed = await sandbox.processes.list();
    expect(listed).toContainEqual({ pid: handle.pid, command: "sleep 30", running: true });
    expect(await sandbox.processes.kill(handle.pid)).toBe(true);
    // kill(pid) waited for the end: the exit is known at once.
    expect(handle.exitCode).toBe(137);
    const after = await sandbox.processes.list();
    expect(after).toContainEqual({ pid: handle.pid, command: "sleep 30", running: false, exitCode: 137 });
    // Killing it again finds nothing to kill.
    expect(await sandbox.processes.kill(handle.pid)).toBe(false);
  });

  it("finds a process another client started, with its output so far, and follows it", async ({ expect }) => {
    const starter = otherClient();
    const started = await starter.processes.spawn("echo from-other; read line; echo got $line");
    await expect.poll(() => started.stdout).toBe("from-other\n");

    const found = await sandbox.processes.get(started.pid);
    expect(found).toBeDefined();
    expect(found!.stdout).toBe("from-other\n");
    expect(found!.exitCode).toBeUndefined();
    expect((await sandbox.processes.list()).map((p) => p.pid)).toContain(started.pid);
    await found!.sendStdin("reply\n");
    expect(await found!.wait()).toMatchObject({ exitCode: 0, stdout: "from-other\ngot reply\n" });
    expect((await started.wait()).stdout).toBe("from-other\ngot reply\n");
    expect(await sandbox.processes.get("no-such-process")).toBeUndefined();
  });

  it("sees a process killed from outside by destroy() end, and the next command works", async ({ expect }) => {
    const victim = new EdgeSandbox(httpConnection("mastra-victim"));
    await victim._start();
    const handle = await victim.processes.spawn("echo up; sleep 60");
    await expect.poll(() => handle.stdout).toBe("up\n");

    const outside = new EdgeSandbox({ ...httpConnection("unused"), sandboxId: victim.id });
    await outside._start();
    await outside._destroy();

    expect(await handle.wait()).toMatchObject({ success: false, killed: true, exitCode: 137 });
    expect(await victim.executeCommand("echo alive")).toMatchObject({ exitCode: 0, stdout: "alive\n" });
    await victim.client.destroy();
  });
});
