/**
 * getHttpSandbox: the same client API over /v1, including streams that reconnect from the last
 * event id after a broken connection. The Worker is real; the only fault is a connection we cut.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import {
  ExecutionTimeoutError,
  FileNotFoundError,
  ProcessNotFoundError,
  SandboxError,
  SandboxAuthError,
  SandboxConnectionError,
  SessionNotFoundError,
  StaleProcessHandleError,
} from "../../src/client/index.ts";
import { getHttpSandbox, type HttpSandboxOptions } from "../../src/client/http.ts";
import { collect, countedLines, countingCommand, cutAfter, eventIds, patternStream, sha256Hex, stdoutOf, uniqueId } from "./helpers.ts";

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const workerFetch: typeof fetch = (input, init) => worker.fetch(new Request(input, init));

function client(label: string, options: Partial<HttpSandboxOptions> = {}) {
  return getHttpSandbox(uniqueId(label), { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: workerFetch, ...options });
}

/** A fetch whose first `matching` streaming response is cut after `bytes` bytes. */
function faultyFetch(matching: RegExp, bytes: number, log: string[]): typeof fetch {
  let cut = false;
  return async (input, init) => {
    const request = new Request(input, init);
    log.push(`${request.method} ${new URL(request.url).pathname} ${request.headers.get("last-event-id") ?? "-"}`);
    const response = await workerFetch(request);
    if (cut || !matching.test(new URL(request.url).pathname) || !response.body) return response;
    cut = true;
    return new Response(cutAfter(response.body, bytes), response);
  };
}

describe("getHttpSandbox", () => {
  it("rejects a timed-out command with ExecutionTimeoutError carrying its output so far, buffered or streamed", async () => {
    const sandbox = client("http-timeout");
    for (const stream of [false, true]) {
      const error = await sandbox.exec("echo so far; echo warned >&2; sleep 30", { timeout: 300, stream }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ExecutionTimeoutError);
      expect(error).toMatchObject({ code: "EXECUTION_TIMEOUT", httpStatus: 422, stdout: "so far\n", stderr: "warned\n", exitCode: 124, signal: "SIGTERM" });
      expect((error as ExecutionTimeoutError).result).toMatchObject({ timedOut: true, killed: true });
    }
  });

  it("offers the same API over HTTP", async () => {
    const sandbox = client("http");
    expect(await sandbox.exec("echo over http")).toMatchObject({ success: true, stdout: "over http\n" });
    const chunks: string[] = [];
    await sandbox.exec("echo streamed", { onOutput: (_s, data) => chunks.push(data) });
    expect(chunks.join("")).toBe("streamed\n");
    const process = await sandbox.startProcess("echo ready; sleep 30", { processId: "web" });
    await process.waitForLog("ready", 10_000);
    expect((await sandbox.listProcesses()).map((p) => p.id)).toEqual(["web"]);
    await process.kill();
    await expect(process.waitForExit(10_000)).resolves.toMatchObject({ status: "killed" });
    await expect(sandbox.killProcess("nope")).rejects.toBeInstanceOf(ProcessNotFoundError);
    expect(await sandbox.getProcess("nope")).toBeNull();
  });

  it("rebuilds auth and stale-handle errors", async () => {
    await expect(client("http-auth", { token: "wrong" }).exec("true")).rejects.toBeInstanceOf(SandboxAuthError);
    const sandbox = client("http-stale");
    const old = await sandbox.startProcess("sleep 30");
    await sandbox.destroy();
    await expect(old.getStatus()).rejects.toBeInstanceOf(StaleProcessHandleError);
  });

  it("resumes a broken log stream from the last event id, without gaps or duplicates", async () => {
    const log: string[] = [];
    const sandbox = client("resume", { fetch: faultyFetch(/logs\/stream$/, 300, log) });
    const process = await sandbox.startProcess(countingCommand(40));
    const events = await collect(sandbox.streamProcessLogs(process.id));
    expect(stdoutOf(events)).toBe(countedLines(40));
    const ids = eventIds(events);
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
    expect(events.at(-1)).toMatchObject({ type: "status", status: "completed" });
    const streams = log.filter((line) => line.includes("logs/stream"));
    expect(streams).toHaveLength(2);
    expect(streams[1]).toMatch(/ \d+$/); // the reconnect sent Last-Event-ID
  });

  it("resumes a broken exec stream from the container's exec events", async () => {
    const log: string[] = [];
    const sandbox = client("resume-exec", { fetch: faultyFetch(/exec\/stream$/, 200, log) });
    const events: ExecEvent[] = await collect(sandbox.execStream("echo before; sleep 0.5; echo after; exit 5"));
    expect(events[0]?.type).toBe("start");
    expect(events.flatMap((e) => (e.type === "stdout" ? [e.data] : [])).join("")).toBe("before\nafter\n");
    expect(events.at(-1)).toMatchObject({ type: "complete", exitCode: 5, result: { exitCode: 5, success: false } });
    expect(log.some((line) => /\/exec\/[^/]+\/stream /.test(line))).toBe(true);
  });

  it("resumes a broken exec stream without gaps or duplicates", async () => {
    const log: string[] = [];
    const sandbox = client("resume-exec-bytes", { fetch: faultyFetch(/exec\/stream$/, 300, log) });
    const events = await collect(sandbox.execStream(`${countingCommand(40)}; exit 3`));
    expect(stdoutOf(events)).toBe(countedLines(40));
    const ids = eventIds(events);
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: "complete", exitCode: 3, result: { exitCode: 3, success: false } });
    const resumed = log.filter((line) => /\/exec\/[^/]+\/stream /.test(line));
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatch(/ \d+$/); // the reconnect sent Last-Event-ID
  });

  it("gives up with SandboxConnectionError after bounded retries", async () => {
    const sandbox = client("give-up", { retry: { attempts: 2, baseDelayMs: 5 } });
    const process = await sandbox.startProcess("while true; do echo tick; sleep 0.05; done");
    let opened = 0;
    const broken = getHttpSandbox(sandbox.id, {
      url: "http://sandbox.test",
      token: env.SANDBOX_API_TOKEN!,
      retry: { attempts: 2, baseDelayMs: 5 },
      fetch: async (input, init) => {
        if (++opened > 1) throw new TypeError("connection refused (test)");
        const response = await workerFetch(input, init);
        return new Response(cutAfter(response.body!, 100), response);
      },
    });
    const seen: LogEvent[] = [];
    const failure = await (async () => {
      for await (const event of broken.streamProcessLogs(process.id)) seen.push(event);
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SandboxConnectionError);
    expect(opened).toBe(3);
    await process.kill("SIGKILL");
  });
});

describe("getHttpSandbox: sessions, files, env and info", () => {
  it("gives session-bound objects that keep state over HTTP", async () => {
    const sandbox = client("http-session");
    const session = await sandbox.createSession({ id: "remote", env: { WHO: "http" } });
    await session.exec("mkdir -p here && cd here && export STEP=1");
    expect((await session.exec('basename "$PWD"; echo "$WHO $STEP"')).stdout).toBe("here\nhttp 1\n");
    const process = await session.startProcess("sleep 30");
    expect((await session.listProcesses()).map((p) => p.id)).toEqual([process.id]);
    expect((await sandbox.getSession("remote")).id).toBe("remote");
    expect(await session.delete()).toEqual({ sessionId: "remote", killed: 1 });
    await expect(sandbox.getSession("remote")).rejects.toBeInstanceOf(SessionNotFoundError);
    await sandbox.destroy();
  });

  it("enableDefaultSession: false runs unnamed commands isolated; a session's relative paths start from its cwd", async () => {
    const sandbox = client("http-sessionless", { enableDefaultSession: false });
    const workspace = (await sandbox.exec("mkdir -p kept && pwd && cd kept && export KEPT=1")).stdout.trim();
    expect((await sandbox.exec('echo "$PWD ${KEPT:-none}"')).stdout).toBe(`${workspace} none\n`);
    // A session named by the call keeps its state all the same.
    await sandbox.exec("export KEPT=1", { sessionId: "named" });
    expect((await sandbox.exec('echo "${KEPT:-none}"', { sessionId: "named" })).stdout).toBe("1\n");
    const session = await sandbox.createSession({ id: "in-kept", cwd: `${workspace}/kept` });
    await session.writeFile("note.txt", "relative to the session");
    expect((await sandbox.readFile("kept/note.txt")).content).toBe("relative to the session");
    expect((await session.listFiles(".")).files.map((f) => f.name)).toEqual(["note.txt"]);
    await session.exec("mkdir -p deeper && cd deeper");
    await session.writeFile("../second.txt", "up one");
    expect((await sandbox.exists("kept/second.txt")).exists).toBe(true);
    await sandbox.destroy();
  });

  it("moves files both ways, streamed and whole, with the same errors as over RPC", async () => {
    const sandbox = client("http-files");
    const size = 5 * 1024 * 1024;
    expect(await sandbox.writeFileStream("up/stream.bin", patternStream(size))).toMatchObject({ bytesWritten: size });
    expect(await sha256Hex(await sandbox.readFileStream("up/stream.bin"))).toEqual(await sha256Hex(patternStream(size)));
    await sandbox.writeFile("up/bytes.bin", Uint8Array.of(0, 1, 2, 255));
    expect(await sandbox.readFile("up/bytes.bin")).toMatchObject({ content: btoa("\u0000\u0001\u0002\u00ff"), isBinary: true, size: 4 });
    expect((await sandbox.listFiles("up")).files.map((f) => f.name)).toEqual(["bytes.bin", "stream.bin"]);
    await sandbox.mkdir("down");
    await sandbox.moveFile("up/bytes.bin", "down");
    expect(await sandbox.exists("down/bytes.bin")).toMatchObject({ exists: true, type: "file" });
    const refused = await sandbox.readFile("/proc/self/environ").then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(SandboxError);
    expect(refused).toMatchObject({ code: "PERMISSION_DENIED", httpStatus: 403 });
    await expect(sandbox.readFileStream("missing.bin")).rejects.toBeInstanceOf(FileNotFoundError);
    await sandbox.destroy();
  });

  it("sets env vars and reports info", async () => {
    const sandbox = client("http-env");
    await sandbox.setEnvVars({ FROM_HTTP: "yes", GONE: "x" });
    await sandbox.setEnvVars({ GONE: undefined });
    expect((await sandbox.exec('echo "$FROM_HTTP ${GONE:-unset}"')).stdout).toBe("yes unset\n");
    expect(await sandbox.getInfo()).toMatchObject({ status: "ok", generationNumber: 1, isolation: { mode: "none" } });
    expect(await sandbox.getInstructions()).toMatch(/working directory/);
    expect((await sandbox.detectIsolation()).none.available).toBe(true);
    await sandbox.destroy();
  });
});
