/**
 * EdgeSandbox.executeCommand, the call behind Mastra's execute_command tool, against the real stack:
 * results, streaming callbacks, arguments that never reach a shell, env, working directory,
 * timeouts, aborts and bytes.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EdgeSandbox } from "../../src/adapters/mastra/index.ts";
import { httpConnection } from "./helpers.ts";

let sandbox: EdgeSandbox;
const sandboxId = () => sandbox.id;
beforeAll(async () => {
  sandbox = new EdgeSandbox({ ...httpConnection("mastra-exec"), env: { GREETING: "hello" }, timeout: 20_000 });
  await sandbox._start();
});
afterAll(() => sandbox.client.destroy());

// The tests share one sandbox but not their commands or files: they run at once.
describe.concurrent("executeCommand", () => {
  it("returns output, exit code and timing like LocalSandbox", async () => {
    const result = await sandbox.executeCommand("echo out; echo err >&2; exit 3");
    expect(result).toMatchObject({ success: false, exitCode: 3, stdout: "out\n", stderr: "err\n", command: "echo out; echo err >&2; exit 3" });
    expect(result.executionTimeMs).toBeGreaterThanOrEqual(0);
    expect(result.timedOut).toBe(false);
    expect(result.killed).toBe(false);
    expect(await sandbox.executeCommand("true")).toMatchObject({ success: true, exitCode: 0, stdout: "", stderr: "" });
  });

  it("streams output to onStdout and onStderr as it arrives", async () => {
    const seen: string[] = [];
    // After "one" the command waits until the test has seen it: output held back until the result
    // would keep it waiting until its timeout, and "two" would never come.
    const gate = `/tmp/streamed-${randomUUID()}`;
    let opened: Promise<unknown> | undefined;
    const result = await sandbox.executeCommand(`echo one; while [ ! -e ${gate} ]; do sleep 0.05; done; echo two >&2`, [], {
      onStdout: (data) => {
        seen.push(`out:${data}`);
        opened ??= sandbox.executeCommand(`touch ${gate}`);
      },
      onStderr: (data) => seen.push(`err:${data}`),
      timeout: 15_000,
    });
    await opened;
    expect(result.timedOut).toBe(false);
    expect(seen).toEqual(["out:one\n", "err:two\n"]);
    expect(result.stdout).toBe("one\n");
  });

  it("passes args as words the shell never parses", async () => {
    const hostile = ["a b", "$(touch pwned)", "; touch pwned2", "`id`", "it's", "\"q\"", "*"];
    const result = await sandbox.executeCommand("printf '%s\\n'", hostile);
    expect(result.stdout).toBe(hostile.map((arg) => `${arg}\n`).join(""));
    expect(result.command).toBe(`printf '%s\\n' 'a b' '$(touch pwned)' '; touch pwned2' '\`id\`' 'it'\\''s' '"q"' '*'`);
    expect(result.args).toEqual(hostile);
    expect((await sandbox.executeCommand("ls")).stdout).not.toMatch(/pwned/);
  });

  it("gives commands the sandbox env, the call's env on top, and nothing of the caller's", async () => {
    process.env.EDGE_ADAPTER_SECRET = "caller-only";
    // Its own client of the sandbox: setEnv below changes that client's overlay.
    const sandbox = new EdgeSandbox({ ...httpConnection("unused"), sandboxId: sandboxId(), env: { GREETING: "hello" } });
    const own = await sandbox.executeCommand('echo "$GREETING $EXTRA ${EDGE_ADAPTER_SECRET:-absent}"', [], { env: { EXTRA: "there" } });
    expect(own.stdout).toBe("hello there absent\n");
    // The next call does not see the previous call's env.
    expect((await sandbox.executeCommand('echo "${EXTRA:-unset}"')).stdout).toBe("unset\n");
    // setEnv changes the overlay for later commands; a call's env still wins.
    sandbox.setEnv((env) => ({ ...env, GREETING: "bonjour" }));
    expect((await sandbox.executeCommand('echo "$GREETING"')).stdout).toBe("bonjour\n");
    expect((await sandbox.executeCommand('echo "$GREETING"', [], { env: { GREETING: "hi" } })).stdout).toBe("hi\n");
    expect((await sandbox.executeCommand('test -n "$PATH" && echo has-path')).stdout).toBe("has-path\n");
  });

  it("runs in the working directory unless the call names another", async () => {
    await sandbox.executeCommand("mkdir -p sub/dir");
    expect((await sandbox.executeCommand("pwd")).stdout.trim()).toBe(sandbox.workingDirectory);
    expect((await sandbox.executeCommand("pwd", [], { cwd: "sub/dir" })).stdout.trim()).toBe(`${sandbox.workingDirectory}/sub/dir`);
    // A sandbox whose working directory is set runs commands and spawns there.
    const inSub = new EdgeSandbox({ ...httpConnection("unused"), sandboxId: sandbox.id, workingDirectory: `${sandbox.workingDirectory}/sub` });
    expect((await inSub.executeCommand("pwd")).stdout.trim()).toBe(`${sandbox.workingDirectory}/sub`);
    expect((await (await inSub.processes.spawn("pwd")).wait()).stdout.trim()).toBe(`${sandbox.workingDirectory}/sub`);
    expect(inSub.workingDirectory).toBe(`${sandbox.workingDirectory}/sub`);
  });

  it("ends a command at its timeout: sleep 10 with 100 ms stops early, non-zero, timed out", async () => {
    const result = await sandbox.executeCommand("sleep 10", [], { timeout: 100 });
    expect(result.executionTimeMs).toBeLessThan(5_000);
    expect(result).toMatchObject({ success: false, exitCode: 124, timedOut: true, killed: true });
    expect(result.stderr).toContain("Process timed out after 100ms");
  });

  it("applies the sandbox's default timeout", async () => {
    const quick = new EdgeSandbox({ ...httpConnection("unused"), sandboxId: sandbox.id, timeout: 150 });
    const result = await quick.executeCommand("sleep 10");
    expect(result).toMatchObject({ exitCode: 124, timedOut: true });
  });

  it("kills the command when the abort signal fires and resolves as killed", async () => {
    const controller = new AbortController();
    const running = sandbox.executeCommand("echo going; sleep 20", [], {
      abortSignal: controller.signal,
      onStdout: () => controller.abort(),
    });
    const result = await running;
    expect(result).toMatchObject({ success: false, killed: true, exitCode: 137, stdout: "going\n" });
    expect(result.executionTimeMs).toBeLessThan(10_000);
  });

  it("writes files byte for byte with writeFiles", async () => {
    const all = new Uint8Array(256).map((_, i) => i);
    await sandbox.writeFiles([
      { path: "bytes.bin", content: Buffer.from(all) },
      { path: "bin/run.sh", content: "#!/bin/sh\necho ran\n", mode: 0o755 },
    ]);
    expect((await sandbox.executeCommand("od -An -v -tx1 bytes.bin | tr -d ' \\n'")).stdout).toBe(
      [...all].map((b) => b.toString(16).padStart(2, "0")).join(""),
    );
    expect((await sandbox.executeCommand("./bin/run.sh")).stdout).toBe("ran\n");
  });
});
