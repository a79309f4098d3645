/**
 * Sessions as named state, not a kept shell: cd and export carry over between commands, sessions
 * stay apart, env layers as sandbox < session < call, and nothing a command does (exit, heredocs,
 * set -e, syntax errors, timeouts, concurrent commands, a removed cwd) can wedge one. Also the
 * session routes, and reading bash's `export -p` back for every kind of value.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, eventually, groupMembers } from "./helpers.ts";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";
import { parseExportList } from "../../container/sessions/export-list.ts";

let t: SandboxServer;
beforeAll(async () => {
  t = await startSandbox();
  mkdirSync(join(t.workspace, "sub"));
});
afterAll(() => t.close());

let counter = 0;
const newSession = () => `s${++counter}`;
const run = (sessionId: string, command: string, extra: Record<string, unknown> = {}) => t.exec({ command, sessionId, ...extra });

describe("session state", () => {
  it("carries cd and export from one command to the next", async () => {
    const id = newSession();
    const first = await run(id, "cd sub && export GREETING='hello world' && echo done");
    expect(first.body).toMatchObject({ exitCode: 0, stdout: "done\n", sessionId: id });
    const second = await run(id, 'pwd; echo "$GREETING"');
    expect(second.body.stdout).toBe(`${join(t.workspace, "sub")}\nhello world\n`);

    const { status, body } = await t.get(`/api/session/${id}`);
    expect(status).toBe(200);
    expect(body.session).toMatchObject({ id, cwd: join(t.workspace, "sub"), env: { GREETING: "hello world" } });
  });

  it("keeps sessions apart, and commands without a session see none of it", async () => {
    const a = newSession();
    const b = newSession();
    await run(a, "cd sub; export ONLY_A=1");
    await run(b, "export ONLY_B=2");
    expect((await run(a, 'pwd; echo "a=${ONLY_A:-} b=${ONLY_B:-}"')).body.stdout).toBe(`${join(t.workspace, "sub")}\na=1 b=\n`);
    expect((await run(b, 'pwd; echo "a=${ONLY_A:-} b=${ONLY_B:-}"')).body.stdout).toBe(`${t.workspace}\na= b=2\n`);
    expect((await t.exec({ command: 'pwd; echo "a=${ONLY_A:-} b=${ONLY_B:-}"' })).body.stdout).toBe(`${t.workspace}\na= b=\n`);
  });

  it("records unset variables and keeps values with newlines and '=' intact", async () => {
    const id = newSession();
    const created = await t.post("/api/session", { id, env: { DROP_ME: "x" } });
    expect(created.status).toBe(200);
    await run(id, "unset DROP_ME; export TRICKY=$'a=b\\nline two'");
    const next = await run(id, 'echo "[${DROP_ME-unset}]"; printf "%s" "$TRICKY"');
    expect(next.body.stdout).toBe("[unset]\na=b\nline two");
    const { body } = await t.get(`/api/session/${id}`);
    expect(body.session.unsetEnv).toContain("DROP_ME");
    expect(body.session.env.DROP_ME).toBeUndefined();
  });

  it("layers env: sandbox < session < call, and per-call env does not stick", async () => {
    const id = newSession();
    await t.post("/api/session", { id, env: { LAYER: "session" } });
    expect((await run(id, "echo $LAYER")).body.stdout).toBe("session\n");
    expect((await run(id, "echo $LAYER", { env: { LAYER: "call", ONCE: "1" } })).body.stdout).toBe("call\n");
    expect((await run(id, 'echo "$LAYER ${ONCE:-none}"')).body.stdout).toBe("session none\n");
  });

  it("gives a direct exec (args) the session's cwd and env, without capturing", async () => {
    const id = newSession();
    await run(id, "cd sub; export DIRECT=yes");
    const { body } = await t.exec({ command: "sh", args: ["-c", 'pwd; echo $DIRECT; cd /; export DIRECT=changed'], sessionId: id });
    expect(body.stdout).toBe(`${join(t.workspace, "sub")}\nyes\n`);
    expect((await run(id, "pwd; echo $DIRECT")).body.stdout).toBe(`${join(t.workspace, "sub")}\nyes\n`);
  });

  it("captures state from background processes too", async () => {
    const id = newSession();
    const started = await call(t.url, "POST", "/api/process/start", { command: "cd sub; export BG=1", options: { sessionId: id } });
    expect(started.status).toBe(200);
    const processId = started.body.process.id;
    expect(await eventually(async () => (await t.get(`/api/process/${processId}`)).body.process.status === "completed")).toBe(true);
    expect((await run(id, "pwd; echo $BG")).body.stdout).toBe(`${join(t.workspace, "sub")}\n1\n`);
  });
});

describe("what cannot break a session", () => {
  it("exit 3", async () => {
    const id = newSession();
    const { body } = await run(id, "cd sub; export AFTER_EXIT=1; exit 3; echo unreachable");
    expect(body).toMatchObject({ exitCode: 3, stdout: "" });
    expect((await run(id, "pwd; echo $AFTER_EXIT")).body.stdout).toBe(`${join(t.workspace, "sub")}\n1\n`);
  });

  it("a heredoc", async () => {
    const id = newSession();
    const command = "cat > heredoc.txt <<'EOF'\nliteral $HOME `x`\nEOF\ncat <<EOF\nexpanded ${PWD}\nEOF\nexport AFTER_HEREDOC=ok";
    const { body } = await run(id, command);
    expect(body.stdout).toBe(`expanded ${t.workspace}\n`);
    const check = await run(id, "cat heredoc.txt; echo $AFTER_HEREDOC");
    expect(check.body.stdout).toBe("literal $HOME `x`\nok\n");
  });

  it("set -e and a failing command: the failure ends that command, errexit carries as an option", async () => {
    const id = newSession();
    const { body } = await run(id, "set -e; export BEFORE_FAIL=1; false; export AFTER_FAIL=1");
    expect(body.exitCode).toBe(1);
    expect((await run(id, 'echo "${BEFORE_FAIL:-} ${AFTER_FAIL:-none}"; echo $-')).body.stdout).toMatch(/^1 none\n[^\n]*e[^\n]*\n$/);
    // A later failure again ends only its own command; the session lives on.
    expect((await run(id, "false; echo not reached")).body).toMatchObject({ exitCode: 1, stdout: "" });
    expect((await run(id, "set +e; false; echo reached")).body).toMatchObject({ exitCode: 0, stdout: "reached\n" });
  });

  it("a syntax error", async () => {
    const id = newSession();
    await run(id, "export KEEP=1");
    const { body } = await run(id, "if then fi (");
    expect(body.exitCode).toBe(2);
    expect((await run(id, "echo $KEEP")).body.stdout).toBe("1\n");
  });

  it("a timed-out command leaves the session as it was", async () => {
    const id = newSession();
    await run(id, "export STATE=before");
    const { body } = await run(id, "cd sub; export STATE=during; sleep 10", { timeout: 300 });
    expect(body).toMatchObject({ code: "EXECUTION_TIMEOUT", context: { timedOut: true, exitCode: 124, sessionId: id } });
    expect((await run(id, "pwd; echo $STATE")).body.stdout).toBe(`${t.workspace}\nbefore\n`);
  });

  it("two concurrent commands: both changes land, the last finisher wins a shared variable", async () => {
    const id = newSession();
    const gate = join(t.workspace, `gate-${id}`);
    // The first waits for the test to open the gate, so it finishes last for certain.
    const slow = run(id, `export SHARED=slow ONLY_SLOW=1; while [ ! -e ${gate} ]; do sleep 0.01; done`);
    const fast = await run(id, "export SHARED=fast ONLY_FAST=1; cd sub");
    expect(fast.body.exitCode).toBe(0);
    expect((await t.get(`/api/session/${id}`)).body.session.env).toMatchObject({ SHARED: "fast", ONLY_FAST: "1" });
    writeFileSync(gate, "");
    expect((await slow).body.exitCode).toBe(0);
    const { body } = await t.get(`/api/session/${id}`);
    expect(body.session.env).toMatchObject({ SHARED: "slow", ONLY_SLOW: "1", ONLY_FAST: "1" });
    // The slow command never changed directory, so it did not undo the fast one's cd.
    expect(body.session.cwd).toBe(join(t.workspace, "sub"));
  });

  it("a removed cwd falls back to the workspace", async () => {
    const id = newSession();
    await run(id, "mkdir -p gone && cd gone");
    await t.exec({ command: `rm -rf ${join(t.workspace, "gone")}` });
    const { body } = await run(id, "pwd");
    expect(body).toMatchObject({ exitCode: 0, stdout: `${t.workspace}\n` });
  });
});

describe("session routes", () => {
  it("creates with id, env and cwd; refuses duplicates; lists; 404s unknown ids", async () => {
    const created = await t.post("/api/session", { id: "named", env: { NAMED: "1" }, cwd: "sub" });
    expect(created.status).toBe(200);
    expect(created.body.session).toMatchObject({ id: "named", cwd: join(t.workspace, "sub"), env: { NAMED: "1" }, runningProcesses: 0 });
    expect((await run("named", "pwd; echo $NAMED")).body.stdout).toBe(`${join(t.workspace, "sub")}\n1\n`);

    const duplicate = await t.post("/api/session", { id: "named" });
    expect(duplicate).toMatchObject({ status: 409, body: { code: "SESSION_EXISTS" } });
    const generated = await t.post("/api/session", {});
    expect(generated.body.session.id).toMatch(/^session_/);

    const list = await t.get("/api/session/list");
    const ids = list.body.sessions.map((s: { id: string }) => s.id);
    expect(ids).toEqual(expect.arrayContaining(["named", generated.body.session.id]));

    expect(await t.get("/api/session/nope")).toMatchObject({ status: 404, body: { code: "SESSION_NOT_FOUND" } });
    expect((await call(t.url, "DELETE", "/api/session/nope")).status).toBe(404);
    expect(await t.post("/api/session", { cwd: "does/not/exist" })).toMatchObject({ status: 404, body: { code: "FILE_NOT_FOUND" } });
    expect(await t.post("/api/session", { id: "bad id" })).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
  });

  it("a command naming an unknown session creates it", async () => {
    await run("auto-made", "export AUTO=1");
    const { status, body } = await t.get("/api/session/auto-made");
    expect(status).toBe(200);
    expect(body.session.env).toEqual({ AUTO: "1" });
  });

  it("deleting a session kills its processes (whole groups) and only its own", async () => {
    const id = newSession();
    const mine = await call(t.url, "POST", "/api/process/start", { command: "sleep 30 & sleep 30", sessionId: id });
    const other = await call(t.url, "POST", "/api/process/start", { command: "sleep 30", sessionId: "bystander" });
    const pid = mine.body.process.pid as number;
    // The background child is forked a moment after the start reply: wait for it rather than race it.
    expect(await eventually(() => groupMembers(pid).length >= 2)).toBe(true);
    expect((await t.get(`/api/session/${id}`)).body.session.runningProcesses).toBe(1);

    const deleted = await call(t.url, "DELETE", `/api/session/${id}`);
    expect(deleted).toMatchObject({ status: 200, body: { sessionId: id, killed: 1 } });
    expect(await eventually(() => groupMembers(pid).length === 0)).toBe(true);
    expect((await t.get(`/api/process/${mine.body.process.id}`)).body.process.status).toBe("killed");
    expect((await t.get(`/api/process/${other.body.process.id}`)).body.process.status).toBe("running");
    expect((await t.get(`/api/session/${id}`)).status).toBe(404);

    const list = await call(t.url, "GET", "/api/process/list?sessionId=bystander");
    expect(list.body.processes.map((p: { id: string }) => p.id)).toEqual([other.body.process.id]);
    await call(t.url, "DELETE", "/api/process/kill-all?sessionId=bystander");
    expect((await t.get(`/api/process/${other.body.process.id}`)).body.process.status).toBe("killed");
  });

  it("sets and unsets a session's env through /api/env", async () => {
    const id = newSession();
    const set = await t.post("/api/env", { sessionId: id, vars: { VIA_API: "1", HOME: null } });
    expect(set.body).toMatchObject({ sessionId: id, vars: { VIA_API: "1" }, unsetEnv: ["HOME"] });
    expect((await run(id, 'echo "$VIA_API ${HOME-nohome}"')).body.stdout).toBe("1 nohome\n");
    expect((await t.get(`/api/env?sessionId=${id}`)).body.vars).toEqual({ VIA_API: "1" });
  });
});

describe("reading bash's export -p", () => {
  const tricky: Record<string, string> = {
    PLAIN: "simple",
    EMPTY: "",
    QUOTES: `it's "quoted" \\ $HOME \`cmd\``,
    CONTROL: "tab\there\nnewline\u0001\u007f\u001b end",
    UNICODE: "héllo ☃ 🎉",
    EQUALS: "a=b=c",
  };

  it.each([["normal mode", ""], ["POSIX mode", "set -o posix; "]])("round-trips every kind of value (%s)", (_label, mode) => {
    const output = execFileSync("bash", ["-c", `${mode}export UNSET_BUT_EXPORTED; export -p`], {
      env: { PATH: process.env.PATH!, ...tricky },
      encoding: "utf8",
    });
    const parsed = parseExportList(output);
    expect(parsed).toMatchObject(tricky);
    expect(parsed).not.toHaveProperty("UNSET_BUT_EXPORTED");
  });
});
