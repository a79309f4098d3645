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
import { IMAGE_ENV_VAR, RUN_TAG_VAR } from "../../protocol/runtime.ts";
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

/** The server program (main.ts) started with `env` over this process's, until the suite ends. */
function serverProgram(env: (workspace: string) => Record<string, string>) {
  const started = { url: "", workspace: "" };
  let child: ChildProcess;
  beforeAll(async () => {
    started.workspace = mkdtempSync(join(tmpdir(), "sandbox-env-"));
    const entry = fileURLToPath(new URL("../../container/main.ts", import.meta.url));
    child = spawn(process.execPath, [entry], { env: { ...process.env, PORT: "0", ...env(started.workspace) }, stdio: ["ignore", "pipe", "inherit"] });
    started.url = await new Promise<string>((resolve, reject) => {
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
    rmSync(started.workspace, { recursive: true, force: true });
  });
  return started;
}

describe("the server program never leaks its own environment", () => {
  const server = serverProgram((workspace) => ({ WORKSPACE: workspace, SECRET_TOKEN: "s3cr3t-value", AWS_SECRET_ACCESS_KEY: "aws-secret" }));

  it("a command cannot see SECRET_TOKEN, through a shell or directly", async () => {
    const url = server.url;
    const shell = await call(url, "POST", "/api/execute", { command: 'env; echo "token=[${SECRET_TOKEN:-}]"' });
    expect(shell.body.stdout).toContain("token=[]\n");
    expect(shell.body.stdout).not.toContain("s3cr3t-value");
    expect(shell.body.stdout).not.toContain("aws-secret");
    const direct = await call(url, "POST", "/api/execute", { command: "env", args: [] });
    expect(envNames(direct.body.stdout)).toEqual(["HOME", "LANG", "PATH", RUN_TAG_VAR]);
  });
});

describe("a server started on its image's environment (the image's start script says so)", () => {
  const image = { DEBIAN_FRONTEND: "noninteractive", PATH: `/opt/image-tools/bin:${process.env.PATH}`, LANG: "C.UTF-8" };
  const server = serverProgram((workspace) => ({
    ...image,
    [IMAGE_ENV_VAR]: "1",
    WORKSPACE: workspace,
    SANDBOX_HOME: workspace,
    NODE_ENV: "production",
    SANDBOX_WARM_CODE: "none",
    SANDBOX_ID: "runtime-given",
  }));

  it("gives every command the image's variables, under the sandbox's and the call's, and none of the server's own", async () => {
    const { body } = await call(server.url, "POST", "/api/execute", { command: "env", args: [] });
    expect(body.stdout).toContain("DEBIAN_FRONTEND=noninteractive\n");
    expect(body.stdout).toContain(`PATH=${image.PATH}\n`);
    expect(body.stdout).toContain(`HOME=${server.workspace}\n`);
    for (const name of ["PORT", "WORKSPACE", "SANDBOX_HOME", "NODE_ENV", "SANDBOX_WARM_CODE", "SANDBOX_ID", IMAGE_ENV_VAR, "PWD"]) {
      expect(envNames(body.stdout), name).not.toContain(name);
    }
    await call(server.url, "POST", "/api/env", { vars: { DEBIAN_FRONTEND: "readline" } });
    expect((await call(server.url, "POST", "/api/execute", { command: "printenv DEBIAN_FRONTEND" })).body.stdout).toBe("readline\n");
    const perCall = await call(server.url, "POST", "/api/execute", { command: 'echo "[${DEBIAN_FRONTEND-unset}]"', env: { DEBIAN_FRONTEND: null } });
    expect(perCall.body.stdout).toBe("[unset]\n");
    await call(server.url, "POST", "/api/env", { vars: { DEBIAN_FRONTEND: null } });
    expect((await call(server.url, "POST", "/api/execute", { command: "printenv DEBIAN_FRONTEND" })).body.stdout).toBe("noninteractive\n");
  });
});
