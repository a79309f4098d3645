/**
 * Forks: a new sandbox with the workspace, config and env of a live sandbox or of one of its
 * snapshots, none of its processes; several at once; never into a sandbox that has run; over /v1 too.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { apiCall, uniqueId } from "./helpers.ts";

const made: SandboxClient[] = [];
const sandbox = (id: string, options?: Parameters<typeof getSandbox>[2]) => {
  const client = getSandbox(env.Sandbox, id, options);
  made.push(client);
  return client;
};
afterAll(() => Promise.all(made.map((client) => client.destroy().catch(() => undefined))));

const MANIFEST = "find . -printf '%p %y %m\\n' | sort; cat notes/a.txt; readlink link";

describe("fork", () => {
  it("makes a new sandbox with the live workspace, config and env, and none of the processes", async () => {
    const parent = sandbox(uniqueId("fork-parent"), { sleepAfter: "7m", envVars: { GREETING: "hello" } });
    await parent.exec("mkdir -p notes empty && echo first > notes/a.txt && ln -s notes/a.txt link && chmod 600 notes/a.txt");
    await parent.startProcess("sleep 30");
    const childId = uniqueId("fork-child");
    const result = await parent.fork(childId);
    expect(result).toMatchObject({ id: childId, from: null });
    expect(result.entries).toBeGreaterThanOrEqual(4);

    const child = sandbox(childId);
    expect((await child.exec(MANIFEST)).stdout).toBe((await parent.exec(MANIFEST)).stdout);
    expect((await child.exec('echo "$GREETING"')).stdout).toBe("hello\n");
    expect((await child.info()).sleepAfter).toBe("7m");
    expect(await child.listProcesses()).toEqual([]);
    // Two sandboxes from here on.
    await child.exec("echo changed > notes/a.txt");
    expect((await parent.exec("cat notes/a.txt")).stdout).toBe("first\n");
  });

  it("forks one parent several times at once", async () => {
    const parent = sandbox(uniqueId("fork-many"));
    await parent.exec("head -c 3000000 /dev/urandom > blob && sha256sum blob > sum");
    const ids = [1, 2, 3].map((n) => uniqueId(`fork-many-${n}`));
    await Promise.all(ids.map((id) => parent.fork(id)));
    for (const id of ids) expect((await sandbox(id).exec("sha256sum -c sum")).exitCode).toBe(0);
  });

  it("forks from a snapshot", async () => {
    const parent = sandbox(uniqueId("fork-snapshot"));
    await parent.exec("echo then > f");
    const backup = await parent.createBackup();
    await parent.exec("echo now > f");
    const childId = uniqueId("fork-from-backup");
    expect(await parent.fork(childId, { from: backup.id })).toMatchObject({ from: backup.id });
    expect((await sandbox(childId).exec("cat f")).stdout).toBe("then\n");
    await expect(parent.fork(uniqueId("fork-missing"), { from: crypto.randomUUID() })).rejects.toMatchObject({ code: "BACKUP_NOT_FOUND" });
  });

  it("never forks into a sandbox that has run, nor into itself", async () => {
    const parentId = uniqueId("fork-refused");
    const parent = sandbox(parentId);
    await parent.exec("echo mine > f");
    const taken = sandbox(uniqueId("fork-taken"));
    await taken.exec("echo theirs > f");
    await expect(parent.fork(taken.id)).rejects.toMatchObject({ code: "SANDBOX_EXISTS", httpStatus: 409 });
    expect((await taken.exec("cat f")).stdout).toBe("theirs\n");
    await expect(parent.fork(parentId)).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(parent.fork("Not A Valid Id!")).rejects.toMatchObject({ code: "INVALID_SANDBOX_ID" });
  });

  it("over /v1", async () => {
    const parent = sandbox(uniqueId("fork-http"));
    await parent.exec("echo over-http > f");
    const childId = uniqueId("fork-http-child");
    const response = await apiCall(`/v1/sandboxes/${parent.id}/fork`, { method: "POST", json: { newId: childId } });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ id: childId, parent: parent.id, from: null });
    expect((await sandbox(childId).exec("cat f")).stdout).toBe("over-http\n");
  });
});
