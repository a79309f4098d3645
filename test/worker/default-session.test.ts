/**
 * The default session through the Durable Object (getSandbox over RPC) and over /v1 (the HTTP
 * client): commands naming no session carry cd, export, unset, functions, aliases and options into
 * the next one, over exec, execStream and startProcess; `isolated` starts clean; a terminal starts in
 * the default session's cwd and env; a session's commandTimeoutMs limits its commands.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { getHttpSandbox } from "../../src/client/http.ts";
import { ExecutionTimeoutError } from "../../src/client/index.ts";
import { collect, sandboxPool, stdoutOf, uniqueId } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
const workerFetch: typeof fetch = (input, init) => worker.fetch(new Request(input, init));

describe("the default session over RPC", () => {
  const sandbox = sandboxes.create("default-session");

  it("carries cd, export and unset across exec, execStream and startProcess", async () => {
    await sandbox.setEnvVars({ FROM_SANDBOX: "x" });
    const first = await sandbox.exec("mkdir -p app && cd app && export MODE=debug && unset FROM_SANDBOX");
    expect(first).toMatchObject({ exitCode: 0, sessionId: "default" });
    expect((await sandbox.exec('basename "$PWD"; echo "$MODE ${FROM_SANDBOX-gone}"')).stdout).toBe("app\ndebug gone\n");

    const events = await collect(sandbox.execStream('basename "$PWD"; cd ..; export STREAMED=1'));
    expect(stdoutOf(events)).toBe("app\n");
    const process = await sandbox.startProcess('basename "$PWD"; echo "$STREAMED"; cd app; export BACKGROUND=1');
    expect(process.sessionId).toBe("default");
    await process.waitForExit(10_000);
    expect((await process.getLogs()).stdout).toBe("workspace\n1\n");
    expect((await sandbox.exec('basename "$PWD"; echo "$BACKGROUND"')).stdout).toBe("app\n1\n");
  });

  it("carries functions, aliases and shell options", async () => {
    await sandbox.exec("greet() { echo \"hi $1\"; }; alias ll='echo listing'; set -o pipefail; shopt -s globstar");
    expect(await sandbox.exec("greet there; ll")).toMatchObject({ exitCode: 0, stdout: "hi there\nlisting\n" });
    expect((await sandbox.exec("false | true")).exitCode).toBe(1);
    expect((await sandbox.exec("shopt -q globstar && echo on")).stdout).toBe("on\n");
    const listed = (await sandbox.listSessions()).find((session) => session.id === "default");
    expect(listed).toMatchObject({ isDefault: true, functions: ["greet"], aliases: ["ll"], shellOptions: expect.arrayContaining(["set -o pipefail", "shopt -s globstar"]) });
  });

  it("exit 3 ends only that command", async () => {
    await sandbox.exec("export BEFORE=1");
    expect((await sandbox.exec("exit 3")).exitCode).toBe(3);
    expect((await sandbox.exec('echo "$BEFORE"')).stdout).toBe("1\n");
  });

  it("isolated: true starts clean and leaves nothing; deleting the default session leaves a fresh one", async () => {
    await sandbox.exec("export SESSION_ONLY=1; only_here() { :; }");
    const isolated = await sandbox.exec('echo "${SESSION_ONLY:-none}"; type only_here >/dev/null 2>&1 || echo no-fn; export LEAK=1', { isolated: true });
    expect(isolated.stdout).toBe("none\nno-fn\n");
    expect((await sandbox.exec('echo "${LEAK:-none}"')).stdout).toBe("none\n");

    await sandbox.deleteSession("default");
    const fresh = await sandbox.getSession("default");
    expect(fresh.session).toMatchObject({ id: "default", isDefault: true, env: {}, functions: [] });
    expect((await sandbox.exec('basename "$PWD"; echo "${SESSION_ONLY:-none}"')).stdout).toBe("workspace\nnone\n");
  });

  it("a terminal started without a session starts in the default session's cwd and env", async () => {
    await sandbox.exec("mkdir -p term && cd term && export TERM_SEES=yes");
    const terminal = await sandbox.createTerminal({ command: 'echo "$(basename "$PWD") $TERM_SEES"' });
    await terminal.waitForExit();
    expect(new TextDecoder().decode((await terminal.output()).data)).toContain("term yes");
  });

  it("a session's commandTimeoutMs limits its commands; a command's own timeout wins", async () => {
    const session = await sandbox.createSession({ id: "limited", commandTimeoutMs: 300 });
    expect(session.session.commandTimeoutMs).toBe(300);
    const timedOut = await session.exec("sleep 5").catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(ExecutionTimeoutError);
    expect(timedOut).toMatchObject({ code: "EXECUTION_TIMEOUT", result: { timedOut: true, exitCode: 124, sessionId: "limited" } });
    expect(await session.exec("sleep 0.6; echo done", { timeout: 5000 })).toMatchObject({ exitCode: 0, stdout: "done\n" });
  });
});

describe("the default session over /v1", () => {
  it("carries state between execs of the HTTP client; isolated starts clean", async () => {
    const sandbox = getHttpSandbox(uniqueId("default-http"), { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: workerFetch });
    try {
      await sandbox.exec("mkdir -p web && cd web && export VIA=http && helper() { echo helped; }");
      expect((await sandbox.exec('basename "$PWD"; echo "$VIA"; helper')).stdout).toBe("web\nhttp\nhelped\n");
      expect(stdoutOf(await collect(sandbox.execStream('basename "$PWD"')))).toBe("web\n");
      expect((await sandbox.exec('basename "$PWD"; echo "${VIA:-none}"', { isolated: true })).stdout).toBe("workspace\nnone\n");
      const session = await sandbox.createSession({ id: "limited", commandTimeoutMs: 300 });
      await expect(session.exec("sleep 5")).rejects.toMatchObject({ code: "EXECUTION_TIMEOUT", result: { timedOut: true } });
    } finally {
      await sandbox.destroy();
    }
  });
});
