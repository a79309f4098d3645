/**
 * Our container server driven by Cloudflare's own Sandbox SDK client (`@cloudflare/sandbox`, its
 * route-based SandboxClient as their Durable Object builds it), the way their Durable Object would
 * reach our image: the client's `containerFetch` calls our server in this process. Every route client
 * operation that maps to a capability we have is exercised, with the shapes their client reads.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CodeInterpreter, collectFile, parseSSEStream, Sandbox, SandboxClient } from "@cloudflare/sandbox";
import { cloudflareClient, NO_SESSION } from "./cloudflare-client.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

/** The version the server reports: the package's. */
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

let t: TestServer;
let client: SandboxClient;

beforeAll(async () => {
  t = await startTestServer();
  client = cloudflareClient(t.url);
});
afterAll(() => t.close());

/** Every event of an SSE stream, parsed by their parser. */
async function events(stream: ReadableStream<Uint8Array>): Promise<Record<string, any>[]> {
  const all: Record<string, any>[] = [];
  for await (const event of parseSSEStream<Record<string, any>>(stream)) all.push(event);
  return all;
}

/** The error a call throws (their client rebuilds it from our response's `code`). */
async function failure(call: Promise<unknown>): Promise<{ code?: string; httpStatus?: number; name?: string; context?: Record<string, unknown> }> {
  try {
    await call;
  } catch (error) {
    return error as never;
  }
  throw new Error("expected the call to fail");
}

describe("utilities and sessions", () => {
  it("reports the container version and answers ping", async () => {
    expect(await client.utils.getVersion()).toBe(PACKAGE_VERSION);
    await expect(client.utils.ping()).resolves.not.toThrow();
  });

  it("creates a session with env and cwd, refuses a duplicate with SESSION_ALREADY_EXISTS, deletes it", async () => {
    mkdirSync(join(t.workspace, "app"), { recursive: true });
    const created = await client.utils.createSession({ id: "cf-session", env: { GREETING: "hi" }, cwd: join(t.workspace, "app") });
    expect(created).toMatchObject({ success: true, containerPlacementId: null });

    const duplicate = await failure(client.utils.createSession({ id: "cf-session" }));
    expect(duplicate).toMatchObject({ name: "SessionAlreadyExistsError", code: "SESSION_ALREADY_EXISTS", httpStatus: 409 });
    expect(duplicate.context).toMatchObject({ sessionId: "cf-session", containerPlacementId: null });

    const first = await client.commands.execute('pwd; echo "$GREETING"; cd ..; export LATER=kept', "cf-session");
    expect(first).toMatchObject({ success: true, exitCode: 0, stdout: `${join(t.workspace, "app")}\nhi\n` });
    const second = await client.commands.execute('pwd; echo "$LATER"', "cf-session");
    expect(second.stdout).toBe(`${t.workspace}\nkept\n`);

    expect(await client.utils.deleteSession("cf-session")).toMatchObject({ success: true, sessionId: "cf-session" });
    expect(await failure(client.utils.deleteSession("cf-session"))).toMatchObject({ code: "SESSION_NOT_FOUND", httpStatus: 404 });
  });

  it("takes the session id their Durable Object makes of a sandbox id with /, + or @ in it (`sandbox-<id>`)", async () => {
    const id = "sandbox-team/user+42@example.com";
    await client.utils.createSession({ id, env: {}, cwd: t.workspace });
    await client.commands.execute("export FROM_DEFAULT=1", id);
    expect((await client.commands.execute('echo "$FROM_DEFAULT"', id)).stdout).toBe("1\n");
    expect(await client.utils.deleteSession(id)).toMatchObject({ sessionId: id });
  });

  it(`treats ${NO_SESSION} as no session: every call starts from a fresh state`, async () => {
    const first = await client.commands.execute("mkdir -p fresh && cd fresh && export SET_BEFORE=1 && pwd", NO_SESSION);
    expect(first.stdout).toBe(`${join(t.workspace, "fresh")}\n`);
    const second = await client.commands.execute('pwd; echo "[${SET_BEFORE:-}]"', NO_SESSION);
    expect(second.stdout).toBe(`${t.workspace}\n[]\n`);
    const sessions = (await (await fetch(`${t.url}/api/session/list`)).json()) as { sessions: { id: string }[] };
    expect(sessions.sessions.map((session) => session.id)).not.toContain(NO_SESSION);
  });
});

describe("commands", () => {
  it("executes with timeoutMs, env and cwd, and reports failure and timeouts", async () => {
    const result = await client.commands.execute('echo "$A" >&2; pwd; exit 3', NO_SESSION, { env: { A: "from env" }, cwd: "/" });
    expect(result).toMatchObject({ success: false, exitCode: 3, stdout: "/\n", stderr: "from env\n", command: 'echo "$A" >&2; pwd; exit 3' });
    // Their container fails a timed-out session command; ours fails every timed-out command, with its result so far.
    const slow = await failure(client.commands.execute("echo so far; sleep 5", NO_SESSION, { timeoutMs: 200 }));
    expect(slow).toMatchObject({ code: "EXECUTION_TIMEOUT", httpStatus: 422, context: { success: false, exitCode: 124, timedOut: true, stdout: "so far\n" } });
  });

  it("streams start, output and complete with the exit code", async () => {
    const stream = await client.commands.executeStream("echo one; echo two >&2; exit 4", NO_SESSION);
    const all = await events(stream);
    expect(all[0]).toMatchObject({ type: "start", command: "echo one; echo two >&2; exit 4" });
    expect(all.filter((e) => e.type === "stdout").map((e) => e.data).join("")).toBe("one\n");
    expect(all.filter((e) => e.type === "stderr").map((e) => e.data).join("")).toBe("two\n");
    expect(all.at(-1)).toMatchObject({ type: "complete", exitCode: 4 });
  });

  it("takes the origin their client marks its own commands with, and refuses one it does not define", async () => {
    const result = await client.commands.execute("echo inside", NO_SESSION, { origin: "internal" });
    expect(result).toMatchObject({ success: true, stdout: "inside\n" });
    const started = await client.processes.startProcess("true", NO_SESSION, { origin: "user" });
    expect(started.processId).toBeTruthy();
    for (const body of [{ command: "true", origin: "robot" }, { command: "true", nobodysKey: 1 }]) {
      const refused = await fetch(`${t.url}/api/execute`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(refused.status).toBe(400);
      const error = (await refused.json()) as { code: string; message: string };
      expect(error.code).toBe("INVALID_REQUEST");
      expect(error.message).toMatch(/origin|nobodysKey/);
    }
  });

  it("runs their Durable Object's setEnvVars (export and unset as internal commands) in the default session", async () => {
    await client.utils.createSession({ id: "env-session" });
    // Their method, on the two fields it reads of its Durable Object: its route client and default session.
    const durableObject = { envVars: {}, defaultSession: "env-session", client };
    await Sandbox.prototype.setEnvVars.call(durableObject as never, { GREETING: "it's here", GONE: "soon" });
    await Sandbox.prototype.setEnvVars.call(durableObject as never, { GONE: undefined });
    const seen = await client.commands.execute('echo "$GREETING|${GONE-unset}"', "env-session");
    expect(seen.stdout).toBe("it's here|unset\n");
  });
});

describe("background processes", () => {
  it("starts a process with the flat fields their client reads, lists, gets and reads its logs", async () => {
    const started = await client.processes.startProcess("echo ready; sleep 30", NO_SESSION, { processId: "cf-proc", env: { X: "1" } });
    expect(started).toMatchObject({ success: true, processId: "cf-proc", command: "echo ready; sleep 30", process: { id: "cf-proc" } });
    expect(started.pid).toBeGreaterThan(0);

    const listed = await client.processes.listProcesses();
    expect(listed.processes.find((p) => p.id === "cf-proc")).toMatchObject({ status: "running", command: "echo ready; sleep 30" });
    expect((await client.processes.getProcess("cf-proc")).process).toMatchObject({ id: "cf-proc", status: "running", pid: started.pid });

    // Their waitForLog reads the logs, then the stream.
    for (let i = 0; i < 100 && !(await client.processes.getProcessLogs("cf-proc")).stdout.includes("ready"); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await client.processes.getProcessLogs("cf-proc")).toMatchObject({ processId: "cf-proc", stdout: "ready\n", stderr: "" });

    await client.processes.killProcess("cf-proc");
    const log = await events(await client.processes.streamProcessLogs("cf-proc"));
    // Their waitForExit, onExit and waitForLog wait for `exit`, and read its exitCode.
    expect(log.at(-1)).toMatchObject({ type: "exit", exitCode: 143 });
    expect((await client.processes.getProcess("cf-proc")).process).toMatchObject({ status: "killed", exitCode: 143 });
  });

  it("ends a process's log stream with exit after all of its output", async () => {
    await client.processes.startProcess("for i in 1 2 3; do echo line $i; done; exit 7", NO_SESSION, { processId: "cf-lines" });
    const log = await events(await client.processes.streamProcessLogs("cf-lines"));
    expect(log.filter((e) => e.type === "stdout").map((e) => e.data).join("")).toBe("line 1\nline 2\nline 3\n");
    expect(log.at(-1)).toMatchObject({ type: "exit", exitCode: 7 });
  });

  it("answers an unknown process with PROCESS_NOT_FOUND", async () => {
    expect(await failure(client.processes.getProcess("no-such-process"))).toMatchObject({ name: "ProcessNotFoundError", code: "PROCESS_NOT_FOUND" });
  });

  it("kills all processes and reports cleanedCount", async () => {
    await client.processes.startProcess("sleep 30", NO_SESSION, { processId: "cf-a" });
    await client.processes.startProcess("sleep 30", NO_SESSION, { processId: "cf-b" });
    const { cleanedCount } = await client.processes.killAllProcesses();
    expect(cleanedCount).toBe(2);
  });
});

/** A TCP port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("port watch (their waitForPort)", () => {
  const serve = (port: number, status: number) =>
    `node -e "setTimeout(() => require('http').createServer((q, s) => { s.writeHead(${status}); s.end(); }).listen(${port}), 300)"`;

  it("reports watching, then ready with the HTTP status once the port answers in range", async () => {
    const port = await freePort();
    await client.processes.startProcess(serve(port, 204), NO_SESSION, { processId: "cf-web" });
    const watch = await events(await client.ports.watchPort({ port, mode: "http", path: "/", statusMin: 200, statusMax: 399, processId: "cf-web", interval: 100 }));
    expect(watch).toEqual([
      { type: "watching", port },
      { type: "ready", port, statusCode: 204 },
    ]);
    await client.processes.killProcess("cf-web");
  });

  it("waits in tcp mode for a connection only, and reports a process that exits first", async () => {
    const port = await freePort();
    await client.processes.startProcess(serve(port, 500), NO_SESSION, { processId: "cf-tcp" });
    expect((await events(await client.ports.watchPort({ port, mode: "tcp", processId: "cf-tcp", interval: 100 }))).at(-1)).toEqual({ type: "ready", port });
    await client.processes.killProcess("cf-tcp");

    await client.processes.startProcess("sleep 0.3; exit 3", NO_SESSION, { processId: "cf-quits" });
    const watch = await events(await client.ports.watchPort({ port: await freePort(), mode: "http", processId: "cf-quits", interval: 100 }));
    expect(watch.at(-1)).toEqual({ type: "process_exited", port: expect.any(Number), exitCode: 3 });
    expect(await failure(client.ports.watchPort({ port, mode: "tcp", processId: "no-such-process" }))).toMatchObject({ code: "PROCESS_NOT_FOUND" });
  });
});

describe("files", () => {
  const at = (name: string) => join(t.workspace, "files", name);

  it("writes, reads text and binary with their encodings and metadata, and checks existence", async () => {
    expect(await client.files.mkdir(join(t.workspace, "files"), NO_SESSION, { recursive: true })).toMatchObject({ success: true, recursive: true });
    expect(await client.files.writeFile(at("hello.txt"), "héllo\n", NO_SESSION)).toMatchObject({ success: true, path: at("hello.txt") });
    const text = await client.files.readFile(at("hello.txt"), NO_SESSION);
    expect(text).toMatchObject({ success: true, content: "héllo\n", encoding: "utf-8", isBinary: false, size: 7 });
    expect(text.mimeType).toMatch(/^text\/plain/);

    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    await client.files.writeFile(at("blob.bin"), bytes.toString("base64"), NO_SESSION, { encoding: "base64" });
    expect(readFileSync(at("blob.bin"))).toEqual(bytes);
    const binary = await client.files.readFile(at("blob.bin"), NO_SESSION);
    expect(binary).toMatchObject({ content: bytes.toString("base64"), encoding: "base64", isBinary: true, size: bytes.length });

    expect(await client.files.exists(at("hello.txt"), NO_SESSION)).toMatchObject({ success: true, exists: true });
    expect(await client.files.exists(at("nothing.txt"), NO_SESSION)).toMatchObject({ success: true, exists: false });
    expect(await failure(client.files.readFile(at("nothing.txt"), NO_SESSION))).toMatchObject({ name: "FileNotFoundError", code: "FILE_NOT_FOUND" });
  });

  it("streams a file as metadata, chunks and complete (text split anywhere, binary in base64)", async () => {
    const text = "π≈3.14159 ✓ ".repeat(40_000);
    writeFileSync(at("big.txt"), text);
    const collected = await collectFile(await client.files.readFileStream(at("big.txt"), NO_SESSION));
    expect(collected.metadata).toMatchObject({ isBinary: false, encoding: "utf-8", size: Buffer.byteLength(text) });
    expect(collected.content).toBe(text);

    const bytes = Buffer.alloc(300_001, 0).map((_, i) => (i * 7) % 256);
    writeFileSync(at("big.bin"), bytes);
    const binary = await collectFile(await client.files.readFileStream(at("big.bin"), NO_SESSION));
    expect(binary.metadata).toMatchObject({ isBinary: true, encoding: "base64", size: bytes.length });
    expect(Buffer.from(binary.content as Uint8Array)).toEqual(bytes);

    const raw = await events(await client.files.readFileStream(at("hello.txt"), NO_SESSION));
    expect(raw.map((e) => e.type)).toEqual(["metadata", "chunk", "complete"]);
    expect(raw.at(-1)).toMatchObject({ type: "complete", bytesRead: 7 });
    expect(await failure(client.files.readFileStream(at("nothing.txt"), NO_SESSION))).toMatchObject({ code: "FILE_NOT_FOUND" });
  });

  it("lists with nested options, permissions and count", async () => {
    writeFileSync(at(".hidden"), "h");
    mkdirSync(at("sub"), { recursive: true });
    writeFileSync(at("sub/inner.txt"), "i");
    const flat = await client.files.listFiles(join(t.workspace, "files"), NO_SESSION);
    expect(flat.files.map((f) => f.name)).not.toContain(".hidden");
    expect(flat.count).toBe(flat.files.length);
    const deep = await client.files.listFiles(join(t.workspace, "files"), NO_SESSION, { recursive: true, includeHidden: true });
    expect(deep.files.map((f) => f.relativePath)).toEqual(expect.arrayContaining([".hidden", "sub/inner.txt"]));
    expect(deep.files.find((f) => f.name === "hello.txt")).toMatchObject({
      type: "file",
      size: 7,
      absolutePath: at("hello.txt"),
      permissions: { readable: true, writable: true, executable: false },
    });
  });

  it("renames, moves and deletes with the paths their client reads", async () => {
    await client.files.writeFile(at("a.txt"), "a", NO_SESSION);
    expect(await client.files.renameFile(at("a.txt"), at("b.txt"), NO_SESSION)).toMatchObject({ success: true, path: at("a.txt"), newPath: at("b.txt") });
    expect(await client.files.moveFile(at("b.txt"), at("sub/c.txt"), NO_SESSION)).toMatchObject({ success: true, path: at("b.txt"), newPath: at("sub/c.txt") });
    expect(readFileSync(at("sub/c.txt"), "utf8")).toBe("a");
    expect(await client.files.deleteFile(at("sub/c.txt"), NO_SESSION)).toMatchObject({ success: true, path: at("sub/c.txt") });
    expect((await client.files.exists(at("sub/c.txt"), NO_SESSION)).exists).toBe(false);
    expect(await failure(client.files.mkdir(at("x/y/z"), NO_SESSION))).toMatchObject({ code: "FILE_NOT_FOUND" });
  });
});

describe("code interpreter (their CodeInterpreter over the route client)", () => {
  // Their Sandbox builds its code interpreter on the route client's `interpreter` exactly so.
  const interpreter = () => new CodeInterpreter(client.interpreter);

  it("creates a Python context with env and cwd, runs cells with stdout, stderr, results and errors through the callbacks, keeps state", async () => {
    const code = interpreter();
    const context = await code.createCodeContext({ language: "python", cwd: t.workspace, envVars: { GREETING: "hi" } });
    expect(context).toMatchObject({ language: "python", cwd: t.workspace });
    expect(context.id).toEqual(expect.any(String));
    expect(context.createdAt.getTime()).not.toBeNaN();

    const seen = { stdout: [] as string[], stderr: [] as string[], results: [] as unknown[], errors: [] as unknown[] };
    const execution = await code.runCode('import os, sys\nprint(os.environ["GREETING"], os.getcwd())\nprint("careful", file=sys.stderr)\nx = 40\nx + 2', {
      context,
      onStdout: (output) => void seen.stdout.push(output.text),
      onStderr: (output) => void seen.stderr.push(output.text),
      onResult: (result) => void seen.results.push(result),
      onError: (error) => void seen.errors.push(error),
    });
    expect(execution.logs.stdout.join("")).toBe(`hi ${t.workspace}\n`);
    expect(execution.logs.stderr.join("")).toBe("careful\n");
    expect(seen.stdout.join("")).toBe(execution.logs.stdout.join(""));
    expect(seen.stderr.join("")).toBe("careful\n");
    expect(execution.results.map((result) => result.text)).toEqual(["42"]);
    expect(execution.results[0]!.formats()).toContain("text");
    expect(seen.results).toHaveLength(1);
    expect(execution.error).toBeUndefined();
    expect(seen.errors).toEqual([]);

    const later = await code.runCode("x", { context });
    expect(later.results.map((result) => result.text)).toEqual(["40"]);

    const failed = await code.runCode("print('before')\n1 / 0", { context, onError: (error) => void seen.errors.push(error) });
    // print() writes the text and its newline apart: they may arrive as one chunk or two.
    expect(failed.logs.stdout.join("")).toBe("before\n");
    expect(failed.error).toMatchObject({ name: "ZeroDivisionError", message: expect.stringContaining("division") });
    expect(failed.error!.traceback.length).toBeGreaterThan(0);
    expect(seen.errors).toEqual([failed.error]);
  });

  it("runs JavaScript with rich results their Result reads (html, text)", async () => {
    const code = interpreter();
    const context = await code.createCodeContext({ language: "javascript", cwd: t.workspace });
    expect(context.language).toBe("javascript");
    const execution = await code.runCode("console.log('a');\ndisplay.html('<b>bold</b>');\n1 + 1", { context });
    expect(execution.logs.stdout.join("")).toBe("a\n");
    expect(execution.results.map((result) => result.formats())).toEqual([["html"], ["text"]]);
    expect(execution.results.map((result) => result.html ?? result.text)).toEqual(["<b>bold</b>", "2"]);
  });

  it("streams a cell's events as their stream readers parse them, ending with execution_complete", async () => {
    const code = interpreter();
    const context = await code.createCodeContext({ language: "python", cwd: t.workspace });
    const all = await events(await code.runCodeStream("print('é' * 3)\n'done'", { context }));
    expect(all.filter((e) => e.type === "stdout").map((e) => e.text).join("")).toBe("ééé\n");
    expect(all.find((e) => e.type === "result")).toMatchObject({ text: "'done'" });
    expect(all.at(-1)).toMatchObject({ type: "execution_complete", execution_count: 1 });
    for (const event of all) expect(event.timestamp).toEqual(expect.any(Number));
  });

  it("stops a cell at its timeout_ms with the interrupt as the cell's error", async () => {
    const code = interpreter();
    const context = await code.createCodeContext({ language: "python", cwd: t.workspace });
    const errors: { name: string }[] = [];
    await client.interpreter.runCodeStream(context.id, "import time\ntime.sleep(30)", undefined, { onError: (error) => void errors.push(error) }, 200);
    expect(errors).toMatchObject([{ name: "KeyboardInterrupt" }]);
  });

  it("lists and deletes contexts; a deleted context is CONTEXT_NOT_FOUND", async () => {
    const code = interpreter();
    const first = await code.createCodeContext({ language: "python", cwd: t.workspace });
    const second = await code.createCodeContext({ language: "typescript", cwd: t.workspace });
    const listed = await code.listCodeContexts();
    expect(listed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: first.id, language: "python", cwd: t.workspace }),
        expect.objectContaining({ id: second.id, language: "typescript", cwd: t.workspace }),
      ]),
    );

    await code.deleteCodeContext(first.id);
    expect((await code.listCodeContexts()).map((context) => context.id)).not.toContain(first.id);
    expect(await failure(code.runCode("1", { context: first }))).toMatchObject({ name: "ContextNotFoundError", code: "CONTEXT_NOT_FOUND", httpStatus: 404 });
    expect(await failure(code.deleteCodeContext(first.id))).toMatchObject({ code: "CONTEXT_NOT_FOUND", httpStatus: 404 });
    await code.deleteCodeContext(second.id);
  });

  it("refuses a context in a language it has not with their VALIDATION_FAILED", async () => {
    const response = await fetch(`${t.url}/api/contexts`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ language: "cobol", cwd: t.workspace }) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_FAILED" });
  });
});

describe("git checkout (their gitCheckout)", () => {
  let repo: string;
  beforeAll(() => {
    // In the workspace: the server may be a built image's, which sees that folder but not the host's /tmp.
    repo = mkdtempSync(join(t.workspace, "cf-repo-"));
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo });
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo, "README.md"), "hello\n");
    git("add", "README.md");
    git("commit", "-q", "-m", "first");
    git("checkout", "-q", "-b", "next");
    writeFileSync(join(repo, "README.md"), "next\n");
    git("commit", "-q", "-am", "second");
  });
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it("clones a branch at a depth into the target directory and answers with their GitCheckoutResult", async () => {
    const targetDir = join(t.workspace, "cf-clone");
    const result = await client.git.checkout(`file://${repo}`, NO_SESSION, { branch: "next", targetDir, depth: 1 });
    expect(result).toMatchObject({ success: true, repoUrl: `file://${repo}`, branch: "next", targetDir, timestamp: expect.any(String) });
    expect(readFileSync(join(targetDir, "README.md"), "utf8")).toBe("next\n");
  });

  it("names a refused URL INVALID_GIT_URL and a failed clone GIT_CLONE_FAILED, as their errors do", async () => {
    const refused = await failure(client.git.checkout("--upload-pack=touch /tmp/x", NO_SESSION, { targetDir: join(t.workspace, "cf-refused") }));
    expect(refused).toMatchObject({ code: "INVALID_GIT_URL", httpStatus: 400 });
    const failed = await failure(client.git.checkout(`file://${repo}`, NO_SESSION, { branch: "missing", targetDir: join(t.workspace, "cf-failed") }));
    expect(failed).toMatchObject({ code: "GIT_CLONE_FAILED" });
  });
});

describe("file watching (their watch and checkChanges)", () => {
  it("resolves once watching, then streams their event frames with absolute paths", async () => {
    const dir = join(t.workspace, "cf-watch");
    mkdirSync(dir);
    const stream = await client.watch.watch({ path: dir, recursive: true, sessionId: NO_SESSION });
    const iterator = parseSSEStream<Record<string, any>>(stream)[Symbol.asyncIterator]();
    const first = (await iterator.next()).value;
    expect(first).toMatchObject({ type: "watching", path: dir, watchId: expect.any(String) });
    writeFileSync(join(dir, "made.txt"), "x");
    let event = (await iterator.next()).value;
    while (event.path !== join(dir, "made.txt")) event = (await iterator.next()).value;
    expect(event).toMatchObject({ type: "event", eventType: "create", path: join(dir, "made.txt"), isDirectory: false, timestamp: expect.any(String) });
    await iterator.return?.();
  });

  it("keeps only the event types asked for", async () => {
    const dir = join(t.workspace, "cf-watch-deletes");
    mkdirSync(dir);
    writeFileSync(join(dir, "old.txt"), "x");
    const stream = await client.watch.watch({ path: dir, events: ["delete"], sessionId: NO_SESSION });
    const iterator = parseSSEStream<Record<string, any>>(stream)[Symbol.asyncIterator]();
    await iterator.next();
    writeFileSync(join(dir, "new.txt"), "x");
    rmSync(join(dir, "old.txt"));
    expect((await iterator.next()).value).toMatchObject({ type: "event", eventType: "delete", path: join(dir, "old.txt") });
    await iterator.return?.();
  });

  it("answers checkChanges with unchanged, changed and resync", async () => {
    const dir = join(t.workspace, "cf-check");
    mkdirSync(dir);
    const first = await client.watch.checkChanges({ path: dir, sessionId: NO_SESSION });
    expect(first).toMatchObject({ success: true, status: "unchanged", version: expect.any(String), timestamp: expect.any(String) });
    expect(await client.watch.checkChanges({ path: dir, since: first.version, sessionId: NO_SESSION })).toMatchObject({ status: "unchanged", version: first.version });
    writeFileSync(join(dir, "file.txt"), "x");
    const changed = await client.watch.checkChanges({ path: dir, since: first.version, sessionId: NO_SESSION });
    expect(changed.status).toBe("changed");
    expect(changed.version).not.toBe(first.version);
    expect(await client.watch.checkChanges({ path: dir, since: "watch-1-123:4", sessionId: NO_SESSION })).toMatchObject({ status: "resync", reason: "restarted" });
  });

  it("refuses the server's own process with their PERMISSION_DENIED", async () => {
    expect(await failure(client.watch.watch({ path: "/proc/self", sessionId: NO_SESSION }))).toMatchObject({ code: "PERMISSION_DENIED", httpStatus: 403 });
  });
});

describe("available commands (their getCommands)", () => {
  it("lists the commands a shell in the sandbox can run", async () => {
    const commands = await client.utils.getCommands();
    expect(commands).toEqual(expect.arrayContaining(["bash", "ls", "git", "cd"]));
    expect(new Set(commands).size).toBe(commands.length);
  });
});
