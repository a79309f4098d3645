/**
 * The default session and the shell state a session carries: a command that names no session runs in
 * the default one (exec, exec stream, background process, terminal), so cd, export and unset carry
 * from one to the next, and so do functions, aliases and shell options; `isolated: true` starts
 * clean and leaves nothing; `exit 3` ends only its own command; commands of one session still run
 * at the same time; a session's commandTimeoutMs limits its commands unless they give their own.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { call, collectEvents, eventually, openStream } from "./helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let t: SandboxServer;
beforeAll(async () => {
  t = await startSandbox();
  mkdirSync(join(t.workspace, "app"));
});
afterAll(() => t.close());
// Each test starts from a fresh default session.
beforeEach(async () => {
  expect((await call(t.url, "DELETE", "/api/session/default")).status).toBe(200);
});

const exec = async (command: string, extra: Record<string, unknown> = {}) => (await t.exec({ command, ...extra })).body;
const stdoutOf = async (command: string, extra: Record<string, unknown> = {}) => (await exec(command, extra)).stdout as string;

describe("the default session", () => {
  it("carries cd, export and unset between commands that name no session", async () => {
    await t.post("/api/env", { vars: { DOOMED: "sandbox" } });
    const first = await exec("cd app && export MODE=debug && unset DOOMED");
    expect(first).toMatchObject({ exitCode: 0, sessionId: "default" });
    expect(await stdoutOf('pwd; echo "$MODE ${DOOMED-gone}"')).toBe(`${join(t.workspace, "app")}\ndebug gone\n`);
    await t.post("/api/env", { vars: { DOOMED: null } });
  });

  it("carries into exec streams and background processes too", async () => {
    await exec("cd app; export FROM_EXEC=1");
    const stream = await openStream(t.url, "/api/execute/stream", { body: { command: 'pwd; echo "$FROM_EXEC"; cd ..; export FROM_STREAM=2' } });
    const events = await collectEvents(stream);
    const stdout = events.filter((e) => e.type === "stdout").map((e) => e.data).join("");
    expect(stdout).toBe(`${join(t.workspace, "app")}\n1\n`);
    expect(events.at(-1)).toMatchObject({ type: "complete", exitCode: 0 });

    const started = await t.post("/api/process/start", { command: 'pwd; echo "$FROM_STREAM"; cd app; export FROM_PROCESS=3' });
    expect(started.body.process.sessionId).toBe("default");
    const id = started.body.process.id as string;
    expect(await eventually(async () => (await t.get(`/api/process/${id}`)).body.process.status === "completed")).toBe(true);
    expect((await t.get(`/api/process/${id}/logs`)).body.stdout).toBe(`${t.workspace}\n2\n`);
    expect(await stdoutOf('pwd; echo "$FROM_PROCESS"')).toBe(`${join(t.workspace, "app")}\n3\n`);
  });

  it("shows in the session list and by id; deleting it leaves a fresh one", async () => {
    await exec("cd app; export LISTED=1; greet() { echo hi; }; alias ll='ls -l'; set -o pipefail");
    const listed = (await t.get("/api/session/list")).body.sessions.find((s: { id: string }) => s.id === "default");
    expect(listed).toMatchObject({
      isDefault: true,
      cwd: join(t.workspace, "app"),
      env: { LISTED: "1" },
      functions: ["greet"],
      aliases: ["ll"],
      shellOptions: ["set -o pipefail"],
    });
    expect((await call(t.url, "DELETE", "/api/session/default")).body).toMatchObject({ sessionId: "default" });
    const fresh = (await t.get("/api/session/default")).body.session;
    expect(fresh).toMatchObject({ id: "default", isDefault: true, cwd: t.workspace, env: {}, functions: [], aliases: [], shellOptions: [] });
    expect(await stdoutOf('pwd; echo "${LISTED:-none}"; type greet >/dev/null 2>&1 || echo no-greet')).toBe(`${t.workspace}\nnone\nno-greet\n`);
    expect(await t.post("/api/session", { id: "default" })).toMatchObject({ status: 409, body: { code: "SESSION_EXISTS" } });
  });

  it("a terminal started without a session starts in the default session's cwd and env", async () => {
    await exec("cd app; export TERMINAL_SEES=yes");
    const created = await call(t.url, "POST", "/api/terminals", { command: 'pwd; echo "seen=$TERMINAL_SEES"' });
    expect(created.status).toBe(200);
    const id = created.body.terminal.id as string;
    await call(t.url, "GET", `/api/terminals/${id}/wait`);
    const text = Buffer.from((await call(t.url, "GET", `/api/terminals/${id}/output?since=0`)).body.data, "base64").toString("utf8");
    expect(text).toContain(join(t.workspace, "app"));
    expect(text).toContain("seen=yes");
  });
});

describe("shell state beyond cwd and env", () => {
  it("functions and aliases defined by one command are usable in the next", async () => {
    const defined = await exec("greet() { echo \"hello $1\"; }; alias shout='echo LOUD'");
    expect(defined.exitCode).toBe(0);
    const used = await exec("greet world; shout it");
    expect(used).toMatchObject({ exitCode: 0, stdout: "hello world\nLOUD it\n" });
    // Removing them carries too.
    await exec("unset -f greet; unalias shout");
    const gone = await exec("greet x");
    expect(gone.exitCode).toBe(127);
    expect((await exec("shout x")).exitCode).toBe(127);
  });

  it("set -o pipefail and shopt -s carry; set back, they are gone", async () => {
    expect((await exec("false | true")).exitCode).toBe(0);
    await exec("set -o pipefail; shopt -s globstar nullglob");
    expect((await exec("false | true")).exitCode).toBe(1);
    expect(await stdoutOf("shopt -q globstar && shopt -q nullglob && echo both")).toBe("both\n");
    await exec("set +o pipefail; shopt -u globstar nullglob");
    expect((await exec("false | true")).exitCode).toBe(0);
    expect((await t.get("/api/session/default")).body.session.shellOptions).toEqual([]);
  });

  it("a named session carries them as well, apart from the default one", async () => {
    await exec("named_fn() { echo named; }; set -o pipefail", { sessionId: "shell-a" });
    expect(await stdoutOf("named_fn", { sessionId: "shell-a" })).toBe("named\n");
    expect((await exec("named_fn")).exitCode).toBe(127);
    expect((await exec("false | true")).exitCode).toBe(0);
  });

  it("functions calling aliases and values with quotes survive the trip", async () => {
    await exec(`alias say='printf "%s|"'; quote() { printf '%s\\n' "it's \\"quoted\\" \\$HOME"; }`);
    expect(await stdoutOf("quote; say a b; echo")).toBe(`it's "quoted" $HOME\na|b|\n`);
  });

  it("xtrace carries without tracing the session's own machinery", async () => {
    await exec("set -x");
    const traced = await exec("echo hi");
    expect(traced.stdout).toBe("hi\n");
    expect(traced.stderr).toBe("+ echo hi\n");
  });
});

describe("what cannot break the default session", () => {
  it("exit 3 is that command's exit code, and the session lives on", async () => {
    await exec("cd app");
    const exited = await exec("export BEFORE_EXIT=1; exit 3; echo never");
    expect(exited).toMatchObject({ exitCode: 3, stdout: "" });
    expect(await stdoutOf('pwd; echo "$BEFORE_EXIT"')).toBe(`${join(t.workspace, "app")}\n1\n`);
  });

  it("two commands of one session run at the same time", async () => {
    const gate = join(t.workspace, "gate-concurrent");
    const waiting = exec(`while [ ! -e ${gate} ]; do sleep 0.01; done; echo waited`);
    // The second runs to its end while the first still waits: no queue.
    expect(await exec(`touch ${gate}; echo opened`)).toMatchObject({ exitCode: 0, stdout: "opened\n" });
    expect(await waiting).toMatchObject({ exitCode: 0, stdout: "waited\n" });
  });

  it("$0, heredocs and syntax errors behave as under plain bash -c", async () => {
    await exec("f() { :; }");
    expect(await stdoutOf("echo $0")).toBe(await stdoutOf("echo $0", { isolated: true }));
    expect(await stdoutOf("cat <<'EOF'\nliteral $HOME\nEOF")).toBe("literal $HOME\n");
    expect((await exec("if then fi (")).exitCode).toBe(2);
  });
});

describe("isolated commands", () => {
  it("start clean and leave nothing behind", async () => {
    await exec("cd app; export SESSION_ONLY=1; sess_fn() { :; }; set -o pipefail");
    const isolated = await exec('pwd; echo "${SESSION_ONLY:-none}"; type sess_fn >/dev/null 2>&1 || echo no-fn; false | true; echo pf=$?; cd ..; export LEAK=1', { isolated: true });
    expect(isolated).toMatchObject({ exitCode: 0, stdout: `${t.workspace}\nnone\nno-fn\npf=0\n` });
    expect(isolated.sessionId).toBeUndefined();
    expect(await stdoutOf('pwd; echo "${LEAK:-none}"')).toBe(`${join(t.workspace, "app")}\nnone\n`);
  });

  it("__DISABLE_SESSION__ means the same", async () => {
    await exec("export SESSION_ONLY=1");
    const body = await exec('echo "${SESSION_ONLY:-none}"; export LEAK=1', { sessionId: "__DISABLE_SESSION__" });
    expect(body).toMatchObject({ stdout: "none\n" });
    expect(body.sessionId).toBeUndefined();
    expect(await stdoutOf('echo "${LEAK:-none}"')).toBe("none\n");
  });

  it("naming a session and asking to be isolated is refused", async () => {
    const reply = await t.exec({ command: "true", sessionId: "s", isolated: true });
    expect(reply).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
  });
});

describe("a session's commandTimeoutMs", () => {
  it("limits each command of the session; a command's own timeout wins", async () => {
    expect((await t.post("/api/session", { id: "limited", commandTimeoutMs: 300 })).body.session.commandTimeoutMs).toBe(300);
    const limited = await t.exec({ command: "sleep 5", sessionId: "limited" });
    expect(limited.status).toBe(422);
    expect(limited.body).toMatchObject({ code: "EXECUTION_TIMEOUT", context: { timedOut: true, exitCode: 124, sessionId: "limited" } });
    const own = await exec("sleep 0.6; echo done", { sessionId: "limited", timeout: 5000 });
    expect(own).toMatchObject({ exitCode: 0, stdout: "done\n" });
    expect(own.timedOut).toBeFalsy();
    const started = await t.post("/api/process/start", { command: "sleep 5", sessionId: "limited" });
    const id = started.body.process.id as string;
    expect(await eventually(async () => (await t.get(`/api/process/${id}`)).body.process.timedOut === true)).toBe(true);
  });

  it("is accepted on Cloudflare's session create", async () => {
    const created = await t.post("/api/session/create", { id: "their-limited", commandTimeoutMs: 250 });
    expect(created.status).toBe(200);
    expect(await exec("sleep 5", { sessionId: "their-limited" })).toMatchObject({ code: "EXECUTION_TIMEOUT", context: { timedOut: true } });
  });
});

