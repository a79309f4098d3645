/**
 * bash contexts at the container server: one shell per context that keeps its cwd, variables and
 * functions between cells, output in order with the cell's end, a failed last command as the run's
 * error, interrupts that return to the prompt with the shell's state kept, and `exit`, which ends
 * the shell and restarts the context.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createContext, run, stdoutText } from "./code-helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

describe("bash contexts", () => {
  it("keep the cwd, variables, exported env and functions between cells", async () => {
    const shell = await createContext(sandbox, { language: "bash" });
    expect(shell).toMatchObject({ language: "bash", cwd: sandbox.workspace });
    const first = await run(sandbox, shell.id, "mkdir -p sub && cd sub\ncount=41\nexport SHARED=yes\ngreet() { echo \"hello $1\"; }\necho set");
    expect(first).toMatchObject({ logs: { stdout: ["set\n"], stderr: [] }, results: [] });
    expect(first.error).toBeUndefined();
    const second = await run(sandbox, shell.id, "pwd; echo $((count + 1)); bash -c 'echo child sees $SHARED'; greet sandbox");
    expect(stdoutText(second)).toBe(`${sandbox.workspace}/sub\n42\nchild sees yes\nhello sandbox\n`);
    expect(second.executionCount).toBe(2);
  });

  it("keep stdout and stderr apart, every byte before the cell's end, with no marker of its own", async () => {
    const shell = await createContext(sandbox, { language: "bash" });
    const execution = await run(sandbox, shell.id, "echo out; echo err >&2; printf 'no newline'; head -c 300000 /dev/zero | tr '\\0' x");
    expect(execution.logs.stderr.join("")).toBe("err\n");
    const out = stdoutText(execution);
    expect(out.startsWith("out\nno newline")).toBe(true);
    expect(out.length).toBe("out\nno newline".length + 300_000);
    expect(out).not.toContain("\0");
  });

  it("report a failing last command as the run's error, and go on", async () => {
    const shell = await createContext(sandbox, { language: "bash" });
    const failed = await run(sandbox, shell.id, "echo before; ls /no/such/path");
    expect(failed.error).toMatchObject({ name: "ExitStatus", value: "The cell's last command exited with status 2" });
    expect(failed.logs.stderr.join("")).toContain("/no/such/path");
    expect((await run(sandbox, shell.id, "false; true")).error).toBeUndefined();
  });

  it("read nothing from the shell's own input: a cell that reads stdin gets end of file", async () => {
    const shell = await createContext(sandbox, { language: "bash" });
    const execution = await run(sandbox, shell.id, "cat; read line; echo \"read: $? [$line]\"\necho after");
    expect(stdoutText(execution)).toBe("read: 1 []\nafter\n");
  });

  it("stop a cell on interrupt or time limit, keeping the shell and its state", async () => {
    const shell = await createContext(sandbox, { language: "bash" });
    await run(sandbox, shell.id, "kept=here");
    const slept = await run(sandbox, shell.id, "echo start; sleep 30; echo never", { timeout: 300 });
    expect(slept).toMatchObject({ interrupted: true, timedOut: true, error: { name: "Interrupted" }, logs: { stdout: ["start\n"] } });
    expect(slept.contextRestarted).toBeUndefined();
    const looped = await run(sandbox, shell.id, "i=0; while true; do i=$((i + 1)); done", { timeout: 300 });
    expect(looped).toMatchObject({ interrupted: true, error: { name: "Interrupted" } });
    expect(looped.contextRestarted).toBeUndefined();
    expect(stdoutText(await run(sandbox, shell.id, "echo $kept"))).toBe("here\n");
  });

  it("restart the context when a cell exits the shell, saying its state is gone", async () => {
    const shell = await createContext(sandbox, { language: "bash" });
    await run(sandbox, shell.id, "lost=1");
    const exited = await run(sandbox, shell.id, "echo bye; exit 4");
    expect(exited).toMatchObject({ contextRestarted: true, error: { name: "ContextRestarted" }, logs: { stdout: ["bye\n"] } });
    expect(exited.error!.value).toContain("exited with code 4");
    const after = await run(sandbox, shell.id, "echo \"[${lost:-}]\"");
    expect(after).toMatchObject({ executionCount: 1, logs: { stdout: ["[]\n"] } });
  });
});
