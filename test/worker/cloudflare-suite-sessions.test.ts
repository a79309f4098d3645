/**
 * Cloudflare's session cases (their session-state-isolation and sessionless-execution workflows),
 * ported to getSandbox: what each session keeps to itself (env, cwd, functions, aliases), what all of
 * them share (processes, files), commands at the same time, deleting a session, and a session's shell
 * ending. Written as code moved from `@cloudflare/sandbox` expects it to pass.
 */
import { afterAll, describe, expect, it } from "vitest";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

describe("session state isolation", () => {
  const sandbox = sandboxes.create("cf-sessions");

  it("isolates environment variables between sessions", async () => {
    const production = await sandbox.createSession({ env: { NODE_ENV: "production", API_KEY: "prod-key-123" } });
    const test = await sandbox.createSession({ env: { NODE_ENV: "test", API_KEY: "test-key-456" } });
    expect((await production.exec('echo "$NODE_ENV|$API_KEY"')).stdout.trim()).toBe("production|prod-key-123");
    expect((await test.exec('echo "$NODE_ENV|$API_KEY"')).stdout.trim()).toBe("test|test-key-456");

    // An export in one session stays in it.
    expect((await production.exec("export PROD_VAR=prod-only")).success).toBe(true);
    expect((await production.exec('echo "$PROD_VAR"')).stdout.trim()).toBe("prod-only");
    expect((await test.exec('echo "$PROD_VAR"')).stdout.trim()).toBe("");
  });

  it("isolates working directories between sessions", async () => {
    await sandbox.mkdir("/workspace/app/src", { recursive: true });
    await sandbox.mkdir("/workspace/test/unit", { recursive: true });
    const app = await sandbox.createSession({ cwd: "/workspace/app" });
    const tests = await sandbox.createSession({ cwd: "/workspace/test" });
    expect((await app.exec("pwd")).stdout.trim()).toBe("/workspace/app");
    expect((await tests.exec("pwd")).stdout.trim()).toBe("/workspace/test");

    await app.exec("cd src");
    await tests.exec("cd unit");
    expect((await app.exec("pwd")).stdout.trim()).toBe("/workspace/app/src");
    expect((await tests.exec("pwd")).stdout.trim()).toBe("/workspace/test/unit");
  });

  it("isolates shell state (functions and aliases) between sessions", async () => {
    const one = await sandbox.createSession();
    const two = await sandbox.createSession();
    expect((await one.exec('greet() { echo "Hello from Production"; }')).success).toBe(true);
    expect(await one.exec("greet")).toMatchObject({ success: true, stdout: "Hello from Production\n" });
    const missing = await two.exec("greet");
    expect(missing.success).toBe(false);
    expect(missing.exitCode).not.toBe(0);

    await two.exec('greet() { echo "Hello from Test"; }');
    expect((await two.exec("greet")).stdout.trim()).toBe("Hello from Test");
    expect((await one.exec("greet")).stdout.trim()).toBe("Hello from Production");

    await one.exec("shopt -s expand_aliases; alias hi='echo aliased-hi'");
    expect((await one.exec("hi")).stdout.trim()).toBe("aliased-hi");
    expect((await two.exec("hi")).success).toBe(false);
  });

  // Ours narrows a session's listProcesses to its own processes; the sandbox lists them all, and any
  // session reaches a process by its id.
  it("shares the process table between sessions", async () => {
    const one = await sandbox.createSession();
    const two = await sandbox.createSession();
    const started = await one.startProcess("sleep 120");
    const seen = (await sandbox.listProcesses()).find((p) => p.id === started.id);
    expect(seen?.status).toBe("running");
    expect((await two.getProcess(started.id))?.status).toBe("running");
    await two.killProcess(started.id);
    const exit = await started.waitForExit(5_000);
    expect(exit.exitCode === null || typeof exit.exitCode === "number").toBe(true);
    expect(exit.status).toBe("killed");
  });

  it("shares the file system between sessions", async () => {
    const one = await sandbox.createSession();
    const two = await sandbox.createSession();
    await one.writeFile("/workspace/shared.txt", "Written by session1");
    expect((await two.readFile("/workspace/shared.txt")).content).toBe("Written by session1");
    await two.writeFile("/workspace/shared.txt", "Modified by session2");
    expect((await one.readFile("/workspace/shared.txt")).content).toBe("Modified by session2");
    await one.deleteFile("/workspace/shared.txt");
  });

  it("runs commands of two sessions at once without mixing their output", async () => {
    const one = await sandbox.createSession({ env: { SESSION_NAME: "session1" } });
    const two = await sandbox.createSession({ env: { SESSION_NAME: "session2" } });
    // Each command finishes only once the other has begun: run one after the other, both would fail.
    const meet = (mine: string, theirs: string) =>
      `touch /workspace/${mine}; for i in $(seq 400); do [ -e /workspace/${theirs} ] && break; sleep 0.05; done; [ -e /workspace/${theirs} ] && echo "Completed in $SESSION_NAME"`;
    const [a, b] = await Promise.all([one.exec(meet("met-1", "met-2")), two.exec(meet("met-2", "met-1"))]);
    expect(a).toMatchObject({ success: true, stdout: "Completed in session1\n" });
    expect(b).toMatchObject({ success: true, stdout: "Completed in session2\n" });
  });

  it("keeps each of several concurrent commands of one session whole", async () => {
    const results = await Promise.all([0, 1, 2].map((i) => sandbox.exec(`echo "START-${i}"; sleep 0.1; echo "END-${i}"`)));
    results.forEach((result, i) => {
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe(`START-${i}\nEND-${i}\n`);
    });
  });

  it("deleteSession drops the session's state and leaves the sandbox running", async () => {
    const session = await sandbox.createSession({ env: { SESSION_VAR: "test-value" } });
    expect((await session.exec('echo "$SESSION_VAR"')).stdout.trim()).toBe("test-value");
    const deleted = await sandbox.deleteSession(session.id);
    expect(deleted).toMatchObject({ sessionId: session.id });
    // A session made again under that id starts afresh.
    const again = await sandbox.createSession({ id: session.id });
    expect((await again.exec('echo "$SESSION_VAR"')).stdout.trim()).toBe("");
    expect((await sandbox.exec('echo "sandbox-alive"')).stdout.trim()).toBe("sandbox-alive");
  });

  it("`exit` in a session ends that command only: the session keeps its state", async () => {
    const session = await sandbox.createSession({ env: { SESSION_MARKER: "before-exit" } });
    expect((await session.exec('echo "$SESSION_MARKER"')).stdout.trim()).toBe("before-exit");
    expect(await session.exec("exit 42")).toMatchObject({ success: false, exitCode: 42 });
    expect((await session.exec('echo "marker=[$SESSION_MARKER]"')).stdout.trim()).toBe("marker=[before-exit]");
    expect((await sandbox.exec("echo sandbox-still-alive")).stdout.trim()).toBe("sandbox-still-alive");
  });
});

describe("the default session", () => {
  const sandbox = sandboxes.create("cf-default-session");

  it("carries cd, export and functions from one call to the next", async () => {
    await sandbox.exec("mkdir -p /workspace/default-state && cd /workspace/default-state && export DEFAULT_MARKER=present");
    await sandbox.exec('mark() { echo "marked"; }');
    expect((await sandbox.exec('printf "%s|%s" "$DEFAULT_MARKER" "$PWD"')).stdout).toBe("present|/workspace/default-state");
    expect((await sandbox.exec("mark")).stdout).toBe("marked\n");
  });

  it("streams a command in the same state", async () => {
    await sandbox.exec("export STREAM_MARKER=streamed");
    let stdout = "";
    let complete = false;
    for await (const event of sandbox.execStream('printf "%s" "${STREAM_MARKER:-missing}"')) {
      if (event.type === "stdout") stdout += event.data;
      if (event.type === "complete") complete = true;
      expect(event.type).not.toBe("error");
    }
    expect(stdout).toBe("streamed");
    expect(complete).toBe(true);
  });

  it("an explicit session is still its own, beside the default one", async () => {
    await sandbox.mkdir("/workspace/scoped", { recursive: true });
    await sandbox.writeFile("/workspace/scoped/file.txt", "session-scoped-file");
    const session = await sandbox.createSession({ cwd: "/workspace/scoped" });
    expect((await session.listFiles(".")).files.map((f) => f.name)).toContain("file.txt");
    await session.exec("export SCOPED_MARKER=present");
    expect((await session.exec('printf "%s" "${SCOPED_MARKER:-missing}"')).stdout).toBe("present");
    expect((await sandbox.exec('printf "%s" "${SCOPED_MARKER:-missing}"')).stdout).toBe("missing");
  });
});

describe("sessionless execution (enableDefaultSession: false)", () => {
  // Cloudflare's option: calls without a session start from a fresh shell each time.
  const sandbox = sandboxes.create("cf-sessionless", { enableDefaultSession: false });

  it("runs implicit exec calls without shared shell state", async () => {
    const first = await sandbox.exec(
      `mkdir -p /workspace/sessionless && export SESSIONLESS_MARKER=present && cd /workspace/sessionless && printf '%s|%s' "$SESSIONLESS_MARKER" "$PWD"`,
    );
    expect(first).toMatchObject({ success: true, stdout: "present|/workspace/sessionless" });
    const second = await sandbox.exec(`printf '%s|%s' "\${SESSIONLESS_MARKER:-missing}" "$PWD"`);
    const [marker, cwd] = second.stdout.split("|");
    expect(marker).toBe("missing");
    expect(cwd).not.toBe("/workspace/sessionless");
  });

  it("streams implicit commands without a persistent shell", async () => {
    expect((await sandbox.exec("export SESSIONLESS_STREAM_MARKER=hidden && printf '%s' \"$SESSIONLESS_STREAM_MARKER\"")).stdout).toBe("hidden");
    let stdout = "";
    const types: string[] = [];
    for await (const event of sandbox.execStream(`printf '%s' "\${SESSIONLESS_STREAM_MARKER:-missing}"`)) {
      types.push(event.type);
      if (event.type === "stdout") stdout += event.data;
    }
    expect(stdout).toBe("missing");
    expect(types).toContain("complete");
    expect(types).not.toContain("error");
  });

  it("still keeps the state of an explicit session, whose cwd relative paths start from", async () => {
    await sandbox.writeFile("/workspace/session-list-files/session-only.txt", "session-scoped-file");
    const session = await sandbox.createSession({ cwd: "/workspace/session-list-files" });
    expect((await session.listFiles(".")).files.map((f) => f.name)).toContain("session-only.txt");
    await session.exec("export SCOPED=present");
    expect((await session.exec("printf '%s' \"${SCOPED:-missing}\"")).stdout).toBe("present");
    expect((await sandbox.exec("printf '%s' \"${SCOPED:-missing}\"")).stdout).toBe("missing");
  });
});
