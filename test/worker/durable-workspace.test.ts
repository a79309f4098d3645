/**
 * Durable workspaces, end to end through the Durable Object, the local R2 bucket and a runtime whose
 * containers start with an empty workspace each time (as on Cloudflare): files of every kind come
 * back identical after the container sleeps or is destroyed with `keep: true`; a failed save is
 * reported, retried, and leaves the previous save as it was; a destroy without `keep` forgets.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import type { PersistenceStatus } from "../../protocol/backups.ts";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import type { SandboxConfig } from "../../src/rpc/sandbox.ts";
import { eventually, sendToRuntime, uniqueId } from "./helpers.ts";

/** A sandbox whose container runs under the runtime with empty workspaces at each start. */
async function ephemeralSandbox(label: string, config: SandboxConfig): Promise<{ id: string; sandbox: SandboxClient }> {
  const id = uniqueId(label);
  await sendToRuntime(id, "ephemeral");
  return { id, sandbox: getSandbox(env.Sandbox, id, config) };
}

async function containerRunning(id: string): Promise<boolean> {
  const response = await fetch(`${inject("ephemeralRuntimeUrl")}/containers/${id}`, { headers: { authorization: `Bearer ${inject("runtimeSecret")}` } });
  return ((await response.json()) as { running: boolean }).running;
}

/** Asleep as the runtime and the Durable Object both see it (the Durable Object learns of the exit a moment later). */
async function asleep(id: string): Promise<boolean> {
  return eventually(
    async () =>
      !(await containerRunning(id)) &&
      (await runInDurableObject(env.Sandbox.get(env.Sandbox.idFromName(id)), (_instance, state) => !state.container?.running)),
    20_000,
    200,
  );
}

/** What the sandbox holds, as one text: every entry's type, mode and link target, and every file's hash. */
const MANIFEST =
  "find . -mindepth 1 -printf '%p %y %m %l\\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2";

/** Text, binary, a link inside and one outside, an executable, empty folders. */
const FILL =
  "mkdir -p src/deep empty/inner && printf 'héllo\\n' > src/a.txt && head -c 3000000 /dev/urandom > src/deep/blob.bin && " +
  "printf '#!/bin/sh\\necho ran\\n' > run.sh && chmod 755 run.sh && ln -s src/a.txt link && ln -s /etc/hostname outside-link";

async function persistenceOf(sandbox: SandboxClient): Promise<PersistenceStatus> {
  return (await sandbox.getInfo()).persistence;
}

describe("durable workspace", () => {
  it("a control: without persistence this runtime's containers start with an empty workspace", async () => {
    const { sandbox } = await ephemeralSandbox("ephemeral-control", {});
    await sandbox.exec("echo gone > file.txt");
    await sandbox.destroy();
    expect((await sandbox.exec("ls -A")).stdout).toBe("");
    await sandbox.destroy();
  });

  it("comes back identical after the container sleeps", async () => {
    const { id, sandbox } = await ephemeralSandbox("sleep-save", { sleepAfter: "1s", persistence: {} });
    expect((await sandbox.exec(FILL)).exitCode).toBe(0);
    const before = (await sandbox.exec(MANIFEST)).stdout;
    expect(before).toContain("./empty/inner d 755");
    expect(before).toContain("./run.sh f 755");
    expect(before).toContain("./link l 777 src/a.txt");
    expect(await asleep(id)).toBe(true);

    const after = await sandbox.exec(MANIFEST);
    expect(after.stdout).toBe(before);
    expect((await sandbox.exec("./run.sh")).stdout).toBe("ran\n");
    const status = await persistenceOf(sandbox);
    expect(status).toMatchObject({ enabled: true, bucket: "SANDBOX_BACKUPS", paths: ["."], onSleep: "save" });
    expect(status.lastSave?.size).toBeGreaterThan(3_000_000);
    expect(status.lastError).toBeUndefined();
    await sandbox.destroy();
  });

  it("comes back after destroy({ keep: true }); a destroy without keep forgets it", async () => {
    const { sandbox } = await ephemeralSandbox("keep", { persistence: { onSleep: "none" } });
    await sandbox.exec(FILL);
    const before = (await sandbox.exec(MANIFEST)).stdout;
    await sandbox.destroy({ keep: true });
    // Calls that arrive together after the start share one restore: each sees all of it.
    const seen = await Promise.all([sandbox.exec(MANIFEST), sandbox.exec(MANIFEST), sandbox.exec(MANIFEST)]);
    expect(seen.map((result) => result.stdout)).toEqual([before, before, before]);
    await sandbox.destroy();
    expect((await sandbox.exec("ls -A")).stdout).toBe("");
    expect((await persistenceOf(sandbox)).lastSave).toBeUndefined();
    await sandbox.destroy();
  });

  it("keeps only the listed paths", async () => {
    const { sandbox } = await ephemeralSandbox("paths", { persistence: { paths: ["kept", "also.txt"], onSleep: "none" } });
    await sandbox.exec("mkdir kept && echo 1 > kept/f && echo 2 > also.txt && echo 3 > dropped.txt");
    await sandbox.destroy({ keep: true });
    expect((await sandbox.exec("ls -A; cat kept/f also.txt")).stdout).toBe("also.txt\nkept\n1\n2\n");
    await sandbox.destroy();
  });

  it("a failed save is reported and retried while the container stays awake; the previous save stays intact", async () => {
    const { id, sandbox } = await ephemeralSandbox("failing-save", { sleepAfter: "1s", persistence: { paths: ["data"] } });
    await sandbox.exec("mkdir data && echo v1 > data/f");
    expect(await asleep(id)).toBe(true);
    expect((await sandbox.exec("cat data/f")).stdout).toBe("v1\n");
    const first = (await persistenceOf(sandbox)).lastSave!;
    expect(first).toBeDefined();

    // A listed path that is gone fails the save (it is never saved as less than asked for).
    await sandbox.exec("rm -rf data");
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(await containerRunning(id)).toBe(true);
    const failing = await runInDurableObject(env.Sandbox.get(env.Sandbox.idFromName(id)), async (_instance, state) =>
      state.storage.get<Pick<PersistenceStatus, "lastSave" | "lastError">>("persistence:status"),
    );
    expect(failing?.lastError?.attempts).toBeGreaterThanOrEqual(2);
    expect(failing?.lastError?.message).toContain("data");
    expect(failing?.lastSave).toEqual(first);
    const pointer = await env.SANDBOX_BACKUPS!.get(`sandboxes/${id}/workspace/current.json`);
    expect(((await pointer!.json()) as { id: string }).id).toBe(first.id);
    expect(await env.SANDBOX_BACKUPS!.head(`sandboxes/${id}/workspace/${first.id}.tar.gz`)).not.toBeNull();

    // Fixed: the next expiry saves and the container sleeps.
    await sandbox.exec("mkdir data && echo v2 > data/f");
    expect(await asleep(id)).toBe(true);
    expect((await sandbox.exec("cat data/f")).stdout).toBe("v2\n");
    const status = await persistenceOf(sandbox);
    expect(status.lastSave?.id).not.toBe(first.id);
    expect(status.lastError).toBeUndefined();
    // The save it replaced is gone from the bucket.
    expect(await env.SANDBOX_BACKUPS!.head(`sandboxes/${id}/workspace/${first.id}.tar.gz`)).toBeNull();
    await sandbox.destroy();
  });

  it("turned on beside a running container, keeps what it holds rather than putting an older save back", async () => {
    const { sandbox } = await ephemeralSandbox("adopt", { persistence: { onSleep: "none" } });
    await sandbox.exec("echo old > old.txt");
    await sandbox.destroy({ keep: true });
    await sandbox.configure({ persistence: null });
    await sandbox.destroy({ keep: false });
    // A container without persistence: its workspace starts empty and gets new work.
    expect((await sandbox.exec("ls -A; echo new > new.txt")).stdout).toBe("");
    await sandbox.configure({ persistence: { onSleep: "none" } });
    expect((await sandbox.exec("ls -A")).stdout).toBe("new.txt\n");
    await sandbox.destroy({ keep: true });
    expect((await sandbox.exec("ls -A")).stdout).toBe("new.txt\n");
    await sandbox.destroy();
  });

  it("destroy({ keep: true }) without persistence is PERSISTENCE_NOT_CONFIGURED and destroys nothing", async () => {
    const { id, sandbox } = await ephemeralSandbox("keep-unconfigured", {});
    await sandbox.exec("true");
    await expect(sandbox.destroy({ keep: true })).rejects.toMatchObject({ code: "PERSISTENCE_NOT_CONFIGURED", httpStatus: 501 });
    expect(await containerRunning(id)).toBe(true);
    await sandbox.destroy();
  });

  it("a bucket binding the Worker lacks is PERSISTENCE_NOT_CONFIGURED, naming it", async () => {
    const { sandbox } = await ephemeralSandbox("no-bucket", { persistence: { bucket: "NO_SUCH_BUCKET" } });
    const error = await sandbox.exec("true").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "PERSISTENCE_NOT_CONFIGURED" });
    expect((error as Error).message).toContain("NO_SUCH_BUCKET");
    await sandbox.configure({ persistence: null });
    expect((await sandbox.exec("echo ok")).stdout).toBe("ok\n");
    await sandbox.destroy();
  });
});
