/**
 * The environment commands run in: sandbox variables set, overridden per call and unset through
 * /api/env, and nothing of the server's own environment (where secrets live) reaching a command,
 * whether the server runs in this process or as its own program.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { call } from "./helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

const envNames = (stdout: string) =>
  stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => line.slice(0, line.indexOf("=")))
    .sort();

describe("sandbox env", () => {
  let t: SandboxServer;
  beforeAll(async () => {
    t = await startSandbox();
  });
  afterAll(() => t.close());

  it("sets variables every command sees, under the per-call env, and unsets with null", async () => {
    const set = await t.post("/api/env", { vars: { SANDBOX_LEVEL: "one", OVERRIDDEN: "sandbox" } });
    expect(set).toMatchObject({ status: 200, body: { vars: { SANDBOX_LEVEL: "one", OVERRIDDEN: "sandbox" } } });
    expect((await t.exec({ command: 'echo "$SANDBOX_LEVEL $OVERRIDDEN"' })).body.stdout).toBe("one sandbox\n");
    expect((await t.exec({ command: 'echo "$SANDBOX_LEVEL $OVERRIDDEN"', env: { OVERRIDDEN: "call" } })).body.stdout).toBe("one call\n");
    expect((await t.get("/api/env")).body.vars).toMatchObject({ SANDBOX_LEVEL: "one" });

    await t.post("/api/env", { vars: { SANDBOX_LEVEL: null } });
    expect((await t.exec({ command: 'echo "[${SANDBOX_LEVEL-unset}]"' })).body.stdout).toBe("[unset]\n");
    expect((await t.get("/api/env")).body.vars.SANDBOX_LEVEL).toBeUndefined();
  });

  it("unsets a variable for one command with a null in its env, hiding the sandbox's and the session's value", async () => {
    await t.post("/api/env", { vars: { HIDDEN: "sandbox" } });
    await t.post("/api/session/create", { id: "null-env", env: { SESSION_ONLY: "session" } });
    const hidden = await t.exec({ command: 'echo "[${HIDDEN-unset}] [${SESSION_ONLY-unset}] $KEPT"', sessionId: "null-env", env: { HIDDEN: null, SESSION_ONLY: null, KEPT: "k" } });
    expect(hidden.body.stdout).toBe("[unset] [unset] k\n");
    // Only for that command: the next one sees both again.
    expect((await t.exec({ command: 'echo "$HIDDEN $SESSION_ONLY"', sessionId: "null-env" })).body.stdout).toBe("sandbox session\n");
    const started = await t.post("/api/process/start", { command: 'echo "[${HIDDEN-unset}]"', env: { HIDDEN: null } });
    expect(started.status).toBe(200);
    const id = (started.body as { processId: string }).processId;
    let logs: { stdout: string; status?: number } = { stdout: "" };
    for (let i = 0; i < 50 && logs.stdout === ""; i++) {
      logs = (await t.get(`/api/process/${id}/logs`)).body as typeof logs;
      if (logs.stdout === "") await new Promise((done) => setTimeout(done, 50));
    }
    expect(logs.stdout).toBe("[unset]\n");
    expect((await t.exec({ command: "true", env: { HIDDEN: 1 } })).status).toBe(400);
    await t.post("/api/env", { vars: { HIDDEN: null } });
  });

  it("rejects malformed variable names", async () => {
    expect(await t.post("/api/env", { vars: { "A=B": "x" } })).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(await t.post("/api/env", { vars: "nope" })).toMatchObject({ status: 400 });
  });

  it("gives commands only PATH, HOME, LANG and their run tag of its own (in-process server with a secret in its env)", async () => {
    process.env.SECRET_TOKEN = "in-process-secret";
    try {
      const { body } = await t.exec({ command: "env", args: [] });
      expect(envNames(body.stdout)).toEqual(["HOME", "LANG", "OVERRIDDEN", "PATH", RUN_TAG_VAR]);
      expect(body.stdout).not.toContain("in-process-secret");
      expect(body.stdout).toContain(`HOME=${t.workspace}`);
    } finally {
      delete process.env.SECRET_TOKEN;
    }
  });
});

describe("the server program never leaks its own environment", () => {
  let child: ChildProcess;
  let url: string;
  let workspace: string;

  beforeAll(async () => {
    workspace = mkdtempSync(join(tmpdir(), "sandbox-env-"));
    const entry = fileURLToPath(new URL("../../container/main.ts", import.meta.url));
    child = spawn(process.execPath, [entry], {
      env: { ...process.env, PORT: "0", WORKSPACE: workspace, SECRET_TOKEN: "s3cr3t-value", AWS_SECRET_ACCESS_KEY: "aws-secret" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    url = await new Promise<string>((resolve, reject) => {
      let output = "";
      child.stdout!.setEncoding("utf8").on("data", (text: string) => {
        output += text;
        const match = output.match(/listening on (http:\/\/\S+)/);
        if (match) resolve(match[1]!);
      });
      child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${output}`)));
    });
  });
  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(workspace, { recursive: true, force: true });
  });

  it("a command cannot see SECRET_TOKEN, through a shell or directly", async () => {
    const shell = await call(url, "POST", "/api/execute", { command: 'env; echo "token=[${SECRET_TOKEN:-}]"' });
    expect(shell.body.stdout).toContain("token=[]\n");
    expect(shell.body.stdout).not.toContain("s3cr3t-value");
    expect(shell.body.stdout).not.toContain("aws-secret");
    const direct = await call(url, "POST", "/api/execute", { command: "env", args: [] });
    expect(envNames(direct.body.stdout)).toEqual(["HOME", "LANG", "PATH", RUN_TAG_VAR]);
  });
});
