/**
 * A Mastra Workspace with an EdgeSandbox gives agents the sandbox tools (execute_command, with
 * background processes, get_process_output, kill_process). The tools are called directly, the way
 * an agent's tool call runs them, without a model.
 */
import { createWorkspaceTools, Workspace, WORKSPACE_TOOLS } from "@mastra/core/workspace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EdgeSandbox } from "../../src/adapters/mastra/index.ts";
import { httpConnection } from "./helpers.ts";

type Tool = { execute(input: Record<string, unknown>, context: Record<string, unknown>): Promise<unknown> };

let sandbox: EdgeSandbox;
let workspace: Workspace;
let tools: Record<string, Tool>;
beforeAll(async () => {
  sandbox = new EdgeSandbox(httpConnection("mastra-workspace"));
  workspace = new Workspace({ sandbox });
  await workspace.init();
  tools = (await createWorkspaceTools(workspace)) as unknown as Record<string, Tool>;
});
afterAll(async () => {
  await workspace.destroy();
});

function call(name: string, input: Record<string, unknown>): Promise<unknown> {
  const tool = tools[name];
  if (!tool) throw new Error(`no tool ${name}; have ${Object.keys(tools).join(", ")}`);
  return tool.execute(input, { workspace });
}

describe("Workspace tools on an EdgeSandbox", () => {
  it("offers the sandbox tools", () => {
    expect(Object.keys(tools)).toEqual(
      expect.arrayContaining([WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND, WORKSPACE_TOOLS.SANDBOX.GET_PROCESS_OUTPUT, WORKSPACE_TOOLS.SANDBOX.KILL_PROCESS]),
    );
    expect(sandbox.status).toBe("running");
  });

  it("runs a command with execute_command", async () => {
    expect(await call(WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND, { command: "echo hi from the tool" })).toBe("hi from the tool\n");
    const failed = await call(WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND, { command: "echo oops >&2; exit 2" });
    expect(failed).toBe("stderr:\noops\n\nExit code: 2");
    const timedOut = await call(WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND, { command: "sleep 10", timeout: 0.2 });
    expect(timedOut).toMatch(/Exit code: 124/);
  });

  it("starts a background process, reads its output, waits for it and kills another", async () => {
    const started = await call(WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND, { command: "echo bg-start; sleep 0.3; echo bg-end", background: true });
    const pid = /PID: ([^)]+)\)/.exec(String(started))?.[1];
    expect(pid).toBeDefined();
    const finished = await call(WORKSPACE_TOOLS.SANDBOX.GET_PROCESS_OUTPUT, { pid, wait: true });
    expect(finished).toBe("bg-start\nbg-end\n\n\nExit code: 0");

    const server = await call(WORKSPACE_TOOLS.SANDBOX.EXECUTE_COMMAND, { command: "echo serving; sleep 60", background: true });
    const serverPid = /PID: ([^)]+)\)/.exec(String(server))?.[1];
    await expect.poll(() => call(WORKSPACE_TOOLS.SANDBOX.GET_PROCESS_OUTPUT, { pid: serverPid })).toBe("serving\n");
    const killed = await call(WORKSPACE_TOOLS.SANDBOX.KILL_PROCESS, { pid: serverPid });
    expect(killed).toMatch(new RegExp(`^Process ${serverPid} has been killed\\.`));
    expect(killed).toContain("serving");
    expect(await call(WORKSPACE_TOOLS.SANDBOX.KILL_PROCESS, { pid: serverPid })).toMatch(/was not found or had already exited/);
  });
});
