/**
 * The sandbox's env vars (setEnvVars, kept across container restarts; nothing of the server's own
 * environment reaching commands) and what a sandbox says about itself: getInfo, getInstructions,
 * detectIsolation.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import { getHttpSandbox } from "../../src/client/http.ts";
import { apiCall, collect, sandboxPool, stdoutOf } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

/** What the platform puts in every container's environment, as workerd's container client names it. */
const PLATFORM_VARS = [
  "CLOUDFLARE_APPLICATION_ID",
  "CLOUDFLARE_COUNTRY_A2",
  "CLOUDFLARE_DEPLOYMENT_ID",
  "CLOUDFLARE_DURABLE_OBJECT_ID",
  "CLOUDFLARE_LOCATION",
  "CLOUDFLARE_REGION",
];
/** What bash adds by itself to any environment. */
const SHELL_VARS = ["PWD", "SHLVL", "_", "OLDPWD"];

describe("a command's env", () => {
  it("unsets a variable for that one command with null: exec, execStream, startProcess, a session's, over RPC, HTTP and /v1", async () => {
    const sandbox = sandboxes.create("null-env", { envVars: { HIDDEN: "sandbox" } });
    const line = 'echo "[${HIDDEN-unset}]"';
    const unset = { env: { HIDDEN: null } };
    expect((await sandbox.exec(line, unset)).stdout).toBe("[unset]\n");
    expect(stdoutOf(await collect(sandbox.execStream(line, unset)))).toBe("[unset]\n");
    const process = await sandbox.startProcess(line, unset);
    await process.waitForExit(10_000);
    expect((await process.getLogs()).stdout).toBe("[unset]\n");
    expect((await sandbox.exec(line)).stdout).toBe("[sandbox]\n");

    const session = await sandbox.createSession({ id: "with-value", env: { HIDDEN: "session" } });
    expect((await session.exec(line, unset)).stdout).toBe("[unset]\n");
    expect((await session.exec(line)).stdout).toBe("[session]\n");

    const workerFetch: typeof fetch = (input, init) => (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default.fetch(new Request(input, init));
    const overHttp = getHttpSandbox(sandbox.id, { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: workerFetch });
    expect((await overHttp.exec(line, unset)).stdout).toBe("[unset]\n");
    const v1 = await apiCall(`/v1/sandboxes/${sandbox.id}/exec`, { method: "POST", json: { command: line, env: { HIDDEN: null } } });
    expect(v1.status).toBe(200);
    expect(((await v1.json()) as { stdout: string }).stdout).toBe("[unset]\n");
  });
});

describe("setEnvVars", () => {
  it("sets and unsets sandbox env vars, under per-call env, and keeps them across a restart", async () => {
    const sandbox = sandboxes.create("setenv", { envVars: { CONFIGURED: "c" } });
    // Before the container ever ran.
    await sandbox.setEnvVars({ EARLY: "e" });
    expect((await sandbox.exec('echo "$CONFIGURED $EARLY"')).stdout).toBe("c e\n");
    await sandbox.setEnvVars({ LATE: "l", CONFIGURED: undefined, EARLY: null });
    expect((await sandbox.exec('echo "${CONFIGURED:-unset} ${EARLY:-unset} $LATE"')).stdout).toBe("unset unset l\n");
    expect((await sandbox.exec('echo "$LATE"', { env: { LATE: "per call" } })).stdout).toBe("per call\n");

    await sandbox.destroy();
    const again = getSandbox(env.Sandbox, sandbox.id);
    expect((await again.exec('echo "${CONFIGURED:-unset} ${EARLY:-unset} $LATE"')).stdout).toBe("unset unset l\n");
    await expect(again.setEnvVars({ "BAD=NAME": "x" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });

  it("commands see PATH, HOME, LANG, their run tag, the image's ENV and the sandbox's vars, nothing of the server's environment", async () => {
    const sandbox = sandboxes.create("noleak", { envVars: { MINE: "1" } });
    const names = (await sandbox.exec("env -0 | tr '\\0' '\\n' | cut -d= -f1")).stdout.split("\n").filter(Boolean);
    // DEBIAN_FRONTEND is the image's (container/Dockerfile), as a command in the built image sees it; the
    // CLOUDFLARE_ ones are what the platform gives every container (workerd's client gives the same names locally).
    expect(names.filter((name) => !SHELL_VARS.includes(name)).sort()).toEqual([...PLATFORM_VARS, "DEBIAN_FRONTEND", "HOME", "LANG", "MINE", "PATH", RUN_TAG_VAR].sort());
  });

  it("commands, code and terminals see the image's ENV under the sandbox's, the session's and the call's env", async () => {
    const sandbox = sandboxes.create("image-env");
    expect((await sandbox.exec("printenv DEBIAN_FRONTEND")).stdout).toBe("noninteractive\n");
    const context = await sandbox.createCodeContext({ language: "python" });
    const code = await sandbox.runCode("import os\nprint(os.environ.get('DEBIAN_FRONTEND'), 'PORT' in os.environ, 'WORKSPACE' in os.environ)", { context });
    expect(code.logs.stdout.join("")).toBe("noninteractive False False\n");
    const terminal = await sandbox.createTerminal({ command: 'printenv DEBIAN_FRONTEND; printenv PORT WORKSPACE SANDBOX_HOME NODE_ENV || echo "none of the server\'s"' });
    await terminal.waitForExit();
    expect(new TextDecoder().decode((await terminal.output()).data).replace(/\r/g, "")).toBe("noninteractive\nnone of the server's\n");
    const session = await sandbox.createSession({ id: "image-env-session", env: { DEBIAN_FRONTEND: "session" } });
    expect((await session.exec("printenv DEBIAN_FRONTEND")).stdout).toBe("session\n");
    expect((await sandbox.exec("printenv DEBIAN_FRONTEND", { env: { DEBIAN_FRONTEND: "call" } })).stdout).toBe("call\n");
    await sandbox.setEnvVars({ DEBIAN_FRONTEND: "sandbox" });
    expect((await sandbox.exec("printenv DEBIAN_FRONTEND")).stdout).toBe("sandbox\n");
    await sandbox.setEnvVars({ DEBIAN_FRONTEND: undefined });
    expect((await sandbox.exec("printenv DEBIAN_FRONTEND")).stdout).toBe("noninteractive\n");
  });

  it("keeps sandbox env vars out of the container server's own environment", async () => {
    const sandbox = sandboxes.create("secret", { envVars: { API_SECRET: "s3cr3t-value" } });
    expect((await sandbox.exec('echo "$API_SECRET"')).stdout).toBe("s3cr3t-value\n");
    // The server is the command's parent: its /proc environ is what a curious command would read.
    const environ = await sandbox.exec("tr '\\0' '\\n' < /proc/$PPID/environ");
    expect(environ.exitCode).toBe(0);
    // It is the server's (its run tag is there), and it holds none of the sandbox's settings.
    expect(environ.stdout).toContain("SANDBOX_RUN_TAG=");
    expect(environ.stdout).not.toContain("s3cr3t-value");
    expect(environ.stdout).not.toContain("WORKSPACE=");
  });

  it("sandbox env vars reach commands but cannot steer the container server itself", async () => {
    const sandbox = sandboxes.create("steer", {
      envVars: { NODE_OPTIONS: "--require /nonexistent/hook.js", PORT: "1", SANDBOX_ISOLATION: "bogus", WORKSPACE: "/" },
    });
    const result = await sandbox.exec('echo "$NODE_OPTIONS|$PORT|$SANDBOX_ISOLATION|$WORKSPACE"; pwd');
    expect(result.stdout.split("\n")[0]).toBe("--require /nonexistent/hook.js|1|bogus|/");
    expect(result.stdout.split("\n")[1]).toMatch(/\/workspace$/);
    expect((await sandbox.getInfo()).isolation.mode).toBe("none");
  });
});

describe("info", () => {
  it("getInfo reports status, resources, isolation, sessions and the generation", async () => {
    const sandbox = sandboxes.create("info");
    await sandbox.createSession({ id: "counted" });
    const info = await sandbox.getInfo();
    expect(info).toMatchObject({
      status: "ok",
      generation: expect.any(String),
      generationNumber: 1,
      sleepAfter: expect.any(String),
      workspace: expect.stringMatching(new RegExp(`/${sandbox.id}/workspace$`)),
      isolation: { mode: "none", pidNamespace: false },
      // The default session and the one created.
      sessions: 2,
      processes: { live: 0 },
      platform: { os: "linux" },
    });
    expect(info.resources.memory.totalBytes).toBeGreaterThan(0);
    expect(info.resources.memory.usedBytes).toBeGreaterThan(0);
    expect(info.resources.cpus).toBeGreaterThanOrEqual(1);
    expect(info.resources.disk.totalBytes).toBeGreaterThan(info.resources.disk.availableBytes);
    expect(info.generation).toBe((await sandbox.info()).generation);
    // This object started the container: how long until its server answered, and in how many probes.
    expect(info.startup).toEqual({ startedAt: expect.any(String), readyMs: expect.any(Number), probes: expect.any(Number) });
    expect(info.startup!.probes).toBeGreaterThanOrEqual(1);
    expect(Date.parse(info.startup!.startedAt)).toBeLessThanOrEqual(Date.parse(info.containerStartedAt) + 1_000);
  });

  it("getInstructions describes the sandbox for an agent", async () => {
    const sandbox = sandboxes.create("instructions");
    const text = await sandbox.getInstructions();
    const { workspace } = await sandbox.getInfo();
    expect(text).toContain(workspace);
    expect(text).toMatch(/session/);
    expect(text.split("\n").length).toBeLessThan(15);
  });

  it("detectIsolation reports what the runtime's machine offers", async () => {
    const support = await sandboxes.create("detect").detectIsolation();
    expect(support.none).toEqual({ available: true });
    // bubblewrap is installed wherever these tests run (.ci/run installs it).
    expect(support.bwrap).toMatchObject({ available: true, version: expect.any(String) });
  });
});
