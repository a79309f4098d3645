/**
 * Two servers started in one process keep their own state: sandbox env vars, sessions, and the
 * environment their commands start from belong to the server they were given to.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let first: SandboxServer;
let second: SandboxServer;
beforeAll(async () => {
  [first, second] = await Promise.all([startSandbox(), startSandbox()]);
});
afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
});

describe("two servers in one process", () => {
  it("keep their sandbox env vars apart", async () => {
    expect(await first.post("/api/env", { vars: { ONLY_FIRST: "one" } })).toMatchObject({ status: 200 });
    expect(await second.post("/api/env", { vars: { ONLY_SECOND: "two" } })).toMatchObject({ status: 200 });

    const echo = 'echo "first=${ONLY_FIRST-unset} second=${ONLY_SECOND-unset}"';
    expect((await first.exec({ command: echo })).body.stdout).toBe("first=one second=unset\n");
    expect((await second.exec({ command: echo })).body.stdout).toBe("first=unset second=two\n");
    expect((await first.get("/api/env")).body.vars).toEqual({ ONLY_FIRST: "one" });
    expect((await second.get("/api/env")).body.vars).toEqual({ ONLY_SECOND: "two" });
  });

  it("give each its own HOME", async () => {
    expect((await first.exec({ command: 'echo "$HOME"' })).body.stdout).toBe(`${first.workspace}\n`);
    expect((await second.exec({ command: 'echo "$HOME"' })).body.stdout).toBe(`${second.workspace}\n`);
  });

  it("keep their sessions apart", async () => {
    const created = await first.post("/api/session", { id: "shared-name", env: { WHERE: "first" } });
    expect(created).toMatchObject({ status: 200, body: { session: { id: "shared-name" } } });

    expect(await second.get("/api/session/shared-name")).toMatchObject({ status: 404, body: { code: "SESSION_NOT_FOUND" } });
    // The other server has only its own default session.
    expect((await second.get("/api/session/list")).body.sessions.map((session: { id: string }) => session.id)).toEqual(["default"]);
    // The same id is free on the other server, and its session starts empty.
    expect(await second.post("/api/session", { id: "shared-name" })).toMatchObject({ status: 200 });
    expect((await second.exec({ command: 'echo "[${WHERE-unset}]"', sessionId: "shared-name" })).body.stdout).toBe("[unset]\n");
    expect((await first.exec({ command: 'echo "[${WHERE-unset}]"', sessionId: "shared-name" })).body.stdout).toBe("[first]\n");
  });
});
