/**
 * Cloudflare's process cases (their process-lifecycle and process-readiness workflows), ported to
 * getSandbox: errors for unknown processes, pid and logs of fast commands, killing whole process trees
 * (one process, kill-all, a SIGTERM-proof one, a deleted session's), live log streams, waitForLog and
 * waitForPort, and foreground commands beside background ones. Their scripts run under Bun; ours run
 * the same under Node (the image has no Bun).
 */
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { eventually } from "./helpers.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

/** Whether a pid is alive inside the sandbox (a zombie counts as dead). */
async function isAlive(sandbox: SandboxClient, pid: number): Promise<boolean> {
  const result = await sandbox.exec(`s=$(ps -o stat= -p ${pid} 2>/dev/null); case "$s" in ""|Z*) echo dead;; *) echo alive;; esac`);
  return result.stdout.trim() === "alive";
}

/** Polls a pid file written by a script in the sandbox. */
async function pidFrom(sandbox: SandboxClient, path: string): Promise<number> {
  let pid = 0;
  const found = await eventually(async () => {
    const read = await sandbox.exec(`cat '${path}' 2>/dev/null`);
    pid = Number(read.stdout.trim());
    return pid > 0;
  }, 10_000);
  if (!found) throw new Error(`no pid in ${path}`);
  return pid;
}

async function allDead(sandbox: SandboxClient, pids: number[]): Promise<boolean> {
  return eventually(async () => (await Promise.all(pids.map((pid) => isAlive(sandbox, pid)))).every((alive) => !alive), 5_000, 250);
}

describe("process lifecycle", () => {
  const sandbox = sandboxes.create("cf-processes");

  it("says killing a process that does not exist is an error", async () => {
    await expect(sandbox.killProcess("fake-process-id-12345")).rejects.toMatchObject({ code: "PROCESS_NOT_FOUND", httpStatus: 404, message: expect.stringMatching(/not found|does not exist|invalid|unknown/i) });
  });

  it("has the pid and the logs of a fast command", async () => {
    const process = await sandbox.startProcess('echo "Hello from process"');
    expect(typeof process.pid).toBe("number");
    await process.waitForExit(10_000);
    expect((await sandbox.getProcessLogs(process.id)).stdout).toContain("Hello from process");
  });

  it("terminates a background process's whole tree when it is killed", async () => {
    await sandbox.writeFile("/workspace/kill-tree.sh", "#!/usr/bin/env bash\necho \"$$\" > /workspace/kill-tree-bash.pid\nsleep 120 &\necho \"$!\" > /workspace/kill-tree-sleep.pid\nwait\n");
    const process = await sandbox.startProcess("bash /workspace/kill-tree.sh");
    const pids = [await pidFrom(sandbox, "/workspace/kill-tree-bash.pid"), await pidFrom(sandbox, "/workspace/kill-tree-sleep.pid")];
    await sandbox.killProcess(process.id);
    await process.waitForExit(10_000);
    expect(await allDead(sandbox, pids)).toBe(true);
    expect((await sandbox.getProcess(process.id))?.status).toBe("killed");
  });

  it("kills every level of a deep process tree", async () => {
    await sandbox.writeFile(
      "/workspace/deep-inner.sh",
      `#!/usr/bin/env bash\necho "$$" > /workspace/deep-l2.pid\nbash -c 'echo "$$" > /workspace/deep-l3.pid; sleep 120 & echo "$!" > /workspace/deep-sleep.pid; wait'\n`,
    );
    await sandbox.writeFile("/workspace/deep.sh", `#!/usr/bin/env bash\necho "$$" > /workspace/deep-l1.pid\nbash /workspace/deep-inner.sh\n`);
    const process = await sandbox.startProcess("bash /workspace/deep.sh");
    const pids = await Promise.all(["l1", "l2", "l3", "sleep"].map((level) => pidFrom(sandbox, `/workspace/deep-${level}.pid`)));
    await sandbox.killProcess(process.id);
    await process.waitForExit(10_000);
    expect(await allDead(sandbox, pids)).toBe(true);
  });

  it("kills all background processes and their children (killAllProcesses)", async () => {
    const started = await Promise.all(
      [0, 1, 2].map(async (i) => {
        await sandbox.writeFile(`/workspace/kill-all-${i}.sh`, `#!/usr/bin/env bash\nsleep 120 &\necho "$!" > /workspace/kill-all-${i}.pid\nwait\n`);
        return sandbox.startProcess(`bash /workspace/kill-all-${i}.sh`);
      }),
    );
    const pids = await Promise.all([0, 1, 2].map((i) => pidFrom(sandbox, `/workspace/kill-all-${i}.pid`)));
    expect(await sandbox.killAllProcesses()).toBeGreaterThanOrEqual(3);
    await Promise.all(started.map((process) => process.waitForExit(10_000)));
    expect(await allDead(sandbox, [...pids, ...started.map((p) => p.pid ?? 0)])).toBe(true);
  });

  // Cloudflare waits 5 s between SIGTERM and SIGKILL; ours waits a shorter grace period.
  it("escalates to SIGKILL when a process traps SIGTERM", async () => {
    await sandbox.writeFile("/workspace/trap.sh", '#!/usr/bin/env bash\ntrap "" SIGTERM\necho "$$" > /workspace/trap.pid\nwhile true; do :; done\n');
    const process = await sandbox.startProcess("bash /workspace/trap.sh");
    const pid = await pidFrom(sandbox, "/workspace/trap.pid");
    const started = Date.now();
    await sandbox.killProcess(process.id);
    const exit = await process.waitForExit(15_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(await isAlive(sandbox, pid)).toBe(false);
    // Theirs says 137. Ours: in a session the command runs under the bash that carries its state out,
    // which SIGTERM ends (143) while the command that trapped it is SIGKILLed after the grace period.
    expect(exit).toMatchObject({ status: "killed", exitCode: 143 });
  });

  it("kills a session's background processes when the session is deleted", async () => {
    const session = await sandbox.createSession();
    await sandbox.writeFile("/workspace/session-bg.sh", '#!/usr/bin/env bash\necho "$$" > /workspace/session-bg.pid\nsleep 120\n');
    await session.startProcess("bash /workspace/session-bg.sh");
    const pid = await pidFrom(sandbox, "/workspace/session-bg.pid");
    await sandbox.deleteSession(session.id);
    expect(await allDead(sandbox, [pid])).toBe(true);
  });

  it("does not block foreground commands while background processes run", async () => {
    // It never ends by itself: an exec that waited for it would never answer.
    const background = await sandbox.startProcess("sleep 100000");
    expect((await sandbox.exec('echo "test"')).stdout.trim()).toBe("test");
    await background.kill();
  });

  it("streams a process's log lines as they come", async () => {
    await sandbox.writeFile("/workspace/script.mjs", 'const sleep = (ms) => new Promise((r) => setTimeout(r, ms));\nconsole.log("Line 1");\nawait sleep(100);\nconsole.log("Line 2");\nawait sleep(100);\nconsole.log("Line 3");\n');
    const process = await sandbox.startProcess("node /workspace/script.mjs");
    let stdout = "";
    for await (const event of sandbox.streamProcessLogs(process.id)) {
      if (event.type === "stdout") stdout += event.data;
      if (stdout.includes("Line 3")) break;
    }
    expect(stdout).toBe("Line 1\nLine 2\nLine 3\n");
  });
});

describe("process readiness", () => {
  const sandbox = sandboxes.create("cf-readiness");

  it("waits for a string in the output (waitForLog)", async () => {
    await sandbox.writeFile("/workspace/server.js", 'console.log("Starting server..."); setTimeout(() => console.log("Server ready on port 8080"), 300); setTimeout(() => {}, 60_000);\n');
    const process = await sandbox.startProcess("node /workspace/server.js");
    const { line } = await process.waitForLog("Server ready", 10_000);
    expect(line).toContain("Server ready on port 8080");
    await process.kill();
  });

  it("waits for a port, which then answers (waitForPort)", async () => {
    await sandbox.writeFile("/workspace/portserver.js", 'setTimeout(() => require("node:http").createServer((q, s) => s.end("OK")).listen(9090), 300);\n');
    const process = await sandbox.startProcess("node /workspace/portserver.js");
    await process.waitForPort(9090, { timeout: 15_000 });
    expect((await sandbox.exec("curl -s http://localhost:9090")).stdout).toBe("OK");
    await process.kill();
  });

  it("chains waitForLog and waitForPort", async () => {
    await sandbox.writeFile(
      "/workspace/app.js",
      'console.log("Database connected"); setTimeout(() => require("node:http").createServer((q, s) => s.end("app")).listen(9091, () => console.log("listening")), 200);\n',
    );
    const process = await sandbox.startProcess("node /workspace/app.js");
    expect((await process.waitForLog(/Database connected/, 10_000)).line).toContain("Database connected");
    await process.waitForPort(9091, { timeout: 10_000 });
    await process.kill();
  });

  it("fails with a timeout when the pattern never appears", async () => {
    const process = await sandbox.startProcess('while true; do echo "still working"; sleep 0.2; done');
    await expect(process.waitForLog("never-going-to-appear", 2_000)).rejects.toThrow(/timeout|timed out|did not become ready|within/i);
    await process.kill();
  });

  it("fails when the process exits before the pattern appears", async () => {
    const process = await sandbox.startProcess('echo "quick exit"');
    await expect(process.waitForLog("never-going-to-appear", 10_000)).rejects.toThrow(/exited|exit|timeout|did not become ready/i);
  });

  it("finds the pattern in stderr too", async () => {
    const process = await sandbox.startProcess('echo "Initializing..." >&2; sleep 0.2; echo "Ready (stderr)" >&2; sleep 60');
    const match = await process.waitForLog("Ready (stderr)", 30_000);
    expect(match.line).toContain("Ready (stderr)");
    await process.kill();
  });
});
