/** Background processes through getSandbox: handles, callbacks, logs, resume, stdin, kill, cleanup, errors. */
import { describe, expect, it } from "vitest";
import { isProcess, isProcessStatus } from "../../src/client/guards.ts";
import {
  ExecutionTimeoutError,
  InvalidRequestError,
  ProcessAlreadyExistsError,
  ProcessNotFoundError,
  ProcessNotRunningError,
  SandboxError,
} from "../../src/client/index.ts";
import { brokenRpcSandbox, collect, countedLines, countingCommand, eventIds, freshSandbox, stdoutOf } from "./helpers.ts";

describe("processes", () => {
  const sandbox = freshSandbox("procs");

  it("starts a process and follows it with a handle", async () => {
    const process = await sandbox.startProcess("echo booting; sleep 0.2; echo 'listening on 8080'; sleep 30", { processId: "server" });
    expect(isProcess(process)).toBe(true);
    expect(process).toMatchObject({ id: "server", command: expect.stringContaining("booting") });
    expect(process.startTime).toBeInstanceOf(Date);
    expect(isProcessStatus(await process.getStatus())).toBe(true);

    const match = await process.waitForLog(/listening on (\d+)/, 10_000);
    expect(match).toMatchObject({ line: "listening on 8080", stream: "stdout" });
    expect(match.match?.[1]).toBe("8080");
    expect(await process.getLogs()).toMatchObject({ stdout: "booting\nlistening on 8080\n", stderr: "" });

    const listed = await sandbox.listProcesses();
    expect(listed.map((p) => p.id)).toContain("server");
    expect((await sandbox.getProcess("server"))?.status).toBe("running");

    await process.kill("SIGTERM");
    await expect(process.waitForExit(10_000)).resolves.toMatchObject({ status: "killed", signal: "SIGTERM" });
    expect(await process.getStatus()).toBe("killed");
  });

  it("honours onStart, onOutput and onExit", async () => {
    const output: string[] = [];
    let started: string | undefined;
    const exited = new Promise<number | null>((resolve, reject) => {
      void sandbox.startProcess("echo out; echo err >&2; exit 7", {
        onStart: (p) => (started = p.id),
        onOutput: (stream, data) => output.push(`${stream}:${data}`),
        onExit: resolve,
        onError: reject,
      });
    });
    await expect(exited).resolves.toBe(7);
    expect(started).toBeTypeOf("string");
    expect(output.sort()).toEqual(["stderr:err\n", "stdout:out\n"]);
  });

  it("streams logs and resumes after an event id without gaps or duplicates", async () => {
    const process = await sandbox.startProcess("for i in 1 2 3 4 5; do echo line$i; done; exit 0");
    await process.waitForExit(10_000);
    const all = await collect(sandbox.streamProcessLogs(process.id));
    const output = all.flatMap((e) => (e.type === "stdout" ? [e.data] : []));
    expect(output.join("")).toBe("line1\nline2\nline3\nline4\nline5\n");
    expect(all.at(-1)).toMatchObject({ type: "status", status: "completed", exitCode: 0 });

    const cut = all[Math.floor(all.length / 2)]!.seq!;
    const resumed = await collect(sandbox.streamProcessLogs(process.id, { since: cut }));
    expect(resumed.map((e) => e.seq)).toEqual(all.filter((e) => e.seq! > cut).map((e) => e.seq));
  });

  it("resumes a log stream broken over Workers RPC from its last event id, without gaps or duplicates", async () => {
    const resumes: string[] = [];
    const broken = brokenRpcSandbox("rpc-resume-logs", "streamProcessLogs", 300, resumes);
    const process = await broken.startProcess(countingCommand(40));
    const events = await collect(broken.streamProcessLogs(process.id));
    expect(stdoutOf(events)).toBe(countedLines(40));
    const ids = eventIds(events);
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed" });
    expect(resumes).toHaveLength(1);
    expect(resumes[0]).toMatch(/^streamProcessLogs \d+$/);
    await broken.destroy();
  });

  it("stops following on abort and on break, leaving the process running", async () => {
    const process = await sandbox.startProcess("while true; do echo tick; sleep 0.05; done");
    const controller = new AbortController();
    let ticks = 0;
    await expect(
      (async () => {
        for await (const event of sandbox.streamProcessLogs(process.id, { signal: controller.signal })) {
          if (event.type === "stdout" && ++ticks === 2) controller.abort(new Error("seen enough"));
        }
      })(),
    ).rejects.toThrow("seen enough");
    const first = await collect(process.streamLogs(), 1);
    expect(first).toHaveLength(1);
    expect(await process.getStatus()).toBe("running");
    await process.kill("SIGKILL");
    await expect(process.waitForExit(10_000)).resolves.toMatchObject({ status: "killed" });
  });

  it("writes and closes stdin", async () => {
    const process = await sandbox.startProcess("read name; echo hello $name; cat; echo done");
    await process.sendStdin("world\n");
    await process.waitForLog("hello world", 10_000);
    const written = await sandbox.writeStdin(process.id, "more\n");
    expect(written).toMatchObject({ processId: process.id, bytesWritten: 5, closed: false });
    await expect(process.closeStdin()).resolves.toMatchObject({ closed: true });
    await expect(process.waitForExit(10_000)).resolves.toMatchObject({ exitCode: 0, status: "completed" });
    expect((await process.getLogs()).stdout).toBe("hello world\nmore\ndone\n");
  });

  it("waits for a port inside the sandbox, and fails fast when the process dies first", async () => {
    // The server picks a free port itself (a guessed one may belong to another program) and says which.
    // waitForPort probes by connecting and hanging up at once, so the server's "hi" can reach a closed
    // socket and come back as a reset: like any real server, it must survive that (a net socket without
    // an 'error' listener would crash the whole process on ECONNRESET).
    const server = await sandbox.startProcess(
      `sleep 0.3; exec node -e "const s = require('net').createServer(c => c.on('error', () => {}).end('hi')).listen(0, '127.0.0.1', () => console.log('port', s.address().port))"`,
    );
    const announced = await server.waitForLog(/port (\d+)/, 15_000);
    const port = Number(announced.match?.[1]);
    expect(port).toBeGreaterThan(0);
    await server.waitForPort(port, { timeout: 15_000 });
    const reply = await sandbox.exec(`exec 3<>/dev/tcp/127.0.0.1/${port}; cat <&3`);
    expect({ exitCode: reply.exitCode, stdout: reply.stdout, stderr: reply.stderr }).toEqual({ exitCode: 0, stdout: "hi", stderr: "" });
    await server.kill();

    // Ports nothing listens on: a guessed neighbour of `port` may belong to another program on this
    // machine (the sandbox shares its network), and then the wait would rightly succeed.
    const [closedA, closedB] = [1, 2];
    const dying = await sandbox.startProcess("sleep 0.2; exit 1");
    await expect(dying.waitForPort(closedA, { timeout: 15_000 })).rejects.toBeInstanceOf(ProcessNotRunningError);
    const silent = await sandbox.startProcess("sleep 30");
    await expect(silent.waitForPort(closedB, { timeout: 300 })).rejects.toBeInstanceOf(ExecutionTimeoutError);
    await silent.kill("SIGKILL");
  });

  it("times out waiting, and rejects waitForLog when the process exits without a match", async () => {
    const sleeper = await sandbox.startProcess("sleep 30");
    await expect(sleeper.waitForExit(200)).rejects.toBeInstanceOf(ExecutionTimeoutError);
    await expect(sleeper.waitForLog("never", 200)).rejects.toMatchObject({ code: "EXECUTION_TIMEOUT" });
    await sleeper.kill("SIGKILL");
    const quitter = await sandbox.startProcess("echo bye");
    await expect(quitter.waitForLog("never", 10_000)).rejects.toBeInstanceOf(ProcessNotRunningError);
  });

  it("kills all, cleans up finished records", async () => {
    const other = freshSandbox("killall");
    await other.startProcess("sleep 30", { processId: "a" });
    await other.startProcess("sleep 30", { processId: "b" });
    await other.startProcess("true", { processId: "c" }).then((p) => p.waitForExit(10_000));
    expect(await other.killAllProcesses()).toBe(2);
    const statuses = Object.fromEntries((await other.listProcesses()).map((p) => [p.id, p.status]));
    expect(statuses).toEqual({ a: "killed", b: "killed", c: "completed" });
    expect(await other.cleanupCompletedProcesses()).toBe(3);
    expect(await other.listProcesses()).toEqual([]);
  });

  it("rebuilds error classes from wire codes", async () => {
    await sandbox.startProcess("sleep 30", { processId: "dup" });
    const duplicate = await sandbox.startProcess("sleep 1", { processId: "dup" }).catch((e: unknown) => e);
    expect(duplicate).toBeInstanceOf(ProcessAlreadyExistsError);
    expect(duplicate).toMatchObject({ code: "PROCESS_EXISTS", httpStatus: 409 });

    const missing = await sandbox.killProcess("no-such-process").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ProcessNotFoundError);
    expect(missing).toBeInstanceOf(SandboxError);
    expect(await sandbox.getProcess("no-such-process")).toBeNull();
    await expect(sandbox.getProcessLogs("no-such-process")).rejects.toBeInstanceOf(ProcessNotFoundError);

    await expect(sandbox.killProcess("dup", "SIGNOPE")).rejects.toMatchObject({ code: "INVALID_SIGNAL" });
    await expect(sandbox.exec("")).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(sandbox.startProcess("x", { processId: "bad id!" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.streamProcessLogs("no-such-process")[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(ProcessNotFoundError);
    await sandbox.killProcess("dup", 9);
  });
});
