/**
 * A body refused midway never wedges its sandbox: the container server, the Durable Object's relay
 * and the Worker each drain it (bounded) or close its connection, so the next call answers at once.
 */
import { afterAll, describe, expect, it } from "vitest";
import { apiCall, sandboxPool } from "./helpers.ts";
import { tarStream } from "./tar-bytes.ts";

const sandboxes = sandboxPool();
afterAll(sandboxes.destroyAll);

/** Fails (rather than hangs) when `work` takes longer than `ms`. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

const BIG = 24 * 1024 * 1024;

describe("a refused archive import", () => {
  it("over RPC: refused at once, and the next call answers at once", async () => {
    const sandbox = sandboxes.create("refused-rpc");
    await sandbox.exec("echo kept > kept.txt");
    await expect(within(15_000, sandbox.importArchive(tarStream("../escape", BIG)))).rejects.toMatchObject({ code: "INVALID_ARCHIVE" });
    expect((await within(10_000, sandbox.exec("echo still here; cat kept.txt; ls -A"))).stdout).toBe("still here\nkept\nkept.txt\n");
    await expect(within(15_000, sandbox.importArchive(tarStream("../escape", BIG)))).rejects.toMatchObject({ code: "INVALID_ARCHIVE" });
    expect((await within(10_000, sandbox.exec("echo again"))).stdout).toBe("again\n");
  });

  it("over /v1: 400 at once, and the next call answers at once", async () => {
    const sandbox = sandboxes.create("refused-http");
    await sandbox.exec("true");
    const refused = await within(15_000, apiCall(`/v1/sandboxes/${sandbox.id}/archive`, { method: "PUT", body: tarStream("../escape", BIG), duplex: "half" } as RequestInit));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "INVALID_ARCHIVE" });
    const next = await within(10_000, apiCall(`/v1/sandboxes/${sandbox.id}/exec`, { method: "POST", json: { command: "echo still here" } }));
    expect(next.status).toBe(200);
    expect(await next.json()).toMatchObject({ stdout: "still here\n" });
  });
});

describe("a refused file upload", () => {
  it("over /v1: refused before its body is read, and the next call answers at once", async () => {
    const sandbox = sandboxes.create("refused-upload");
    await sandbox.exec("mkdir -p folder");
    for (let round = 0; round < 2; round++) {
      const refused = await within(
        15_000,
        apiCall(`/v1/sandboxes/${sandbox.id}/files/content?path=folder`, { method: "PUT", body: tarStream("x", BIG), duplex: "half" } as RequestInit),
      );
      expect(await refused.json()).toMatchObject({ code: "IS_A_DIRECTORY" });
      expect((await within(10_000, sandbox.exec("echo still here"))).stdout).toBe("still here\n");
    }
  });
});

