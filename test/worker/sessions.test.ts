/**
 * Sessions through getSandbox → Durable Object → container: state carried within a session and never
 * across, the session-bound object, narrowing process calls to a session, and deleting a session.
 */
import { afterAll, describe, expect, it } from "vitest";
import { SessionAlreadyExistsError, SessionNotFoundError } from "../../src/client/index.ts";
import { sandboxPool } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

describe("sessions", () => {
  const sandbox = sandboxes.create("sessions");

  it("carry cd and export from one command to the next, and never into another session", async () => {
    const one = await sandbox.createSession({ id: "one", env: { GREETING: "hi" } });
    const two = await sandbox.createSession({ id: "two" });
    expect(one.id).toBe("one");
    expect(one.sandboxId).toBe(sandbox.id);

    await one.exec("mkdir -p deep/er && cd deep/er && export MARK=one");
    await two.exec("export MARK=two");
    expect((await one.exec('basename "$PWD"; echo "$MARK $GREETING"')).stdout).toBe("er\none hi\n");
    expect((await two.exec('basename "$PWD"; echo "$MARK ${GREETING:-none}"')).stdout).toBe("workspace\ntwo none\n");
    // The sandbox itself (no session) saw none of it.
    expect((await sandbox.exec('basename "$PWD"; echo "${MARK:-none}"')).stdout).toBe("workspace\nnone\n");

    const state = await one.info();
    expect(state.cwd).toMatch(/\/workspace\/deep\/er$/);
    expect(state.env).toMatchObject({ GREETING: "hi", MARK: "one" });
    expect((await sandbox.listSessions()).map((s) => s.id)).toEqual(expect.arrayContaining(["one", "two"]));
  });

  it("survive a failing command, a heredoc and a timeout", async () => {
    const session = await sandbox.createSession();
    expect(session.id).toMatch(/.+/);
    await session.exec("mkdir -p kept && cd kept && export STAY=yes");
    expect((await session.exec("exit 3")).exitCode).toBe(3);
    expect((await session.exec("cat <<'EOF'\nline $STAY\nEOF")).stdout).toBe("line $STAY\n");
    await expect(session.exec("sleep 10", { timeout: 200 })).rejects.toMatchObject({ code: "EXECUTION_TIMEOUT", result: { timedOut: true } });
    expect((await session.exec('basename "$PWD"; echo "$STAY"')).stdout).toBe("kept\nyes\n");
  });

  it("runs background processes in the session; list and kill-all see only the session's", async () => {
    const session = await sandbox.createSession({ id: "procs" });
    const inSession = await session.startProcess("sleep 30");
    const outside = await sandbox.startProcess("sleep 30");
    expect(inSession.sessionId).toBe("procs");
    expect((await session.listProcesses()).map((p) => p.id)).toEqual([inSession.id]);
    expect((await sandbox.listProcesses()).map((p) => p.id)).toEqual(expect.arrayContaining([inSession.id, outside.id]));

    expect(await session.killAllProcesses()).toBe(1);
    expect((await inSession.waitForExit(10_000)).status).toBe("killed");
    expect(await outside.getStatus()).toBe("running");
    await outside.kill("SIGKILL");
  });

  it("deleting a session kills its processes and forgets it", async () => {
    const session = await sandbox.createSession({ id: "doomed" });
    const running = await session.startProcess("sleep 30");
    const bystander = await sandbox.startProcess("sleep 30");
    expect(await sandbox.deleteSession("doomed")).toEqual({ sessionId: "doomed", killed: 1 });
    expect((await running.waitForExit(10_000)).status).toBe("killed");
    expect(await bystander.getStatus()).toBe("running");
    await expect(sandbox.getSession("doomed")).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(session.info()).rejects.toMatchObject({ code: "SESSION_NOT_FOUND", httpStatus: 404 });
    await bystander.kill("SIGKILL");
  });

  it("getSession gives a bound object for an existing session; ids are unique", async () => {
    await sandbox.createSession({ id: "again", cwd: "." });
    await expect(sandbox.createSession({ id: "again" })).rejects.toBeInstanceOf(SessionAlreadyExistsError);
    const again = await sandbox.getSession("again");
    await again.exec("export FROM_HANDLE=1");
    expect((await (await sandbox.getSession("again")).exec('echo "$FROM_HANDLE"')).stdout).toBe("1\n");
    await expect(sandbox.createSession({ id: "bad id!" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.createSession({ cwd: "missing-dir" })).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
  });

  it("keeps per-session env vars (setEnvVars on the session), unset with null or undefined", async () => {
    const session = await sandbox.createSession({ id: "envs" });
    await session.setEnvVars({ ONLY_HERE: "1", ALSO: "2" });
    expect((await session.exec('echo "$ONLY_HERE $ALSO"')).stdout).toBe("1 2\n");
    expect((await sandbox.exec('echo "${ONLY_HERE:-none}"')).stdout).toBe("none\n");
    await session.setEnvVars({ ONLY_HERE: undefined, ALSO: null });
    expect((await session.exec('echo "${ONLY_HERE:-unset} ${ALSO:-unset}"')).stdout).toBe("unset unset\n");
  });

  it("offers the sandbox's file operations on the session object", async () => {
    const session = await sandbox.createSession({ id: "files" });
    await session.writeFile("from-session.txt", "written in a session");
    expect((await sandbox.readFile("from-session.txt")).content).toBe("written in a session");
    expect(await session.exists("from-session.txt")).toMatchObject({ exists: true, type: "file" });
    // Relative paths of a session's file calls start from its cwd, wherever `cd` took it.
    await session.exec("mkdir -p nested && cd nested");
    await session.writeFile("inner.txt", "in nested");
    expect((await sandbox.readFile("nested/inner.txt")).content).toBe("in nested");
    expect((await session.readFile("../from-session.txt")).content).toBe("written in a session");
    expect((await session.listFiles()).files.map((f) => f.name)).toEqual(["inner.txt"]);
    await session.renameFile("inner.txt", "renamed.txt");
    expect(await sandbox.exists("nested/renamed.txt")).toMatchObject({ exists: true });
  });
});
