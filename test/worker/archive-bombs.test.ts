/**
 * Hostile archives through the Worker and the Durable Object, to a real container: a refused archive
 * as the very first call of a new sandbox (the container starting under it) is 400 INVALID_ARCHIVE
 * like any other, and 2 GiB of zeros gzip'd (2 MB on the wire) is refused with its code while the
 * sandbox's next command answers as usual.
 */
import { afterAll, describe, expect, it } from "vitest";
import { apiCall, sandboxPool } from "./helpers.ts";
import { tarStream } from "./tar-bytes.ts";

const sandboxes = sandboxPool();
afterAll(sandboxes.destroyAll);

const MIB = 1024 * 1024;

/**
 * `members` gzip members of 32 MiB of zeros each, one after another: a valid gzip stream (gunzip
 * reads every member) of `members` × 32 MiB of zeros, at about a thousand to one.
 */
async function gzippedZeros(members: number): Promise<Uint8Array> {
  const zeros = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < 32; i++) controller.enqueue(new Uint8Array(MIB));
      controller.close();
    },
  });
  const member = new Uint8Array(await new Response(zeros.pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
  const bomb = new Uint8Array(member.length * members);
  for (let i = 0; i < members; i++) bomb.set(member, i * member.length);
  return bomb;
}

describe("a refused archive as the first call of a new sandbox", () => {
  it("over RPC: INVALID_ARCHIVE, and the sandbox answers next", async () => {
    const sandbox = sandboxes.create("first-refused-rpc");
    await expect(sandbox.importArchive(tarStream("../escape", 4 * MIB))).rejects.toMatchObject({ code: "INVALID_ARCHIVE" });
    expect((await sandbox.exec("echo still here")).stdout).toBe("still here\n");
  });

  it("over /v1: 400 INVALID_ARCHIVE, for an archive refused at its first entry and for bytes that are no archive", async () => {
    for (const body of [tarStream("../escape", 4 * MIB), new TextEncoder().encode("no archive at all, only text ".repeat(1000))]) {
      const sandbox = sandboxes.create("first-refused-http");
      const refused = await apiCall(`/v1/sandboxes/${sandbox.id}/archive`, { method: "PUT", body, duplex: "half" } as RequestInit);
      expect(await refused.json()).toMatchObject({ code: "INVALID_ARCHIVE" });
      expect(refused.status).toBe(400);
    }
  });
});

describe("a gzip bomb", () => {
  it("2 GiB of zeros gzip'd is refused with its code, and the next command answers", async () => {
    const bomb = await gzippedZeros(64);
    expect(bomb.length).toBeLessThan(4 * MIB);
    const sandbox = sandboxes.create("bomb");
    await sandbox.exec("echo kept > kept.txt");
    const refused = await apiCall(`/v1/sandboxes/${sandbox.id}/archive`, { method: "PUT", body: bomb });
    expect(await refused.json()).toMatchObject({ code: "INVALID_ARCHIVE" });
    expect(refused.status).toBe(400);
    expect((await sandbox.exec("echo still here; ls")).stdout).toBe("still here\nkept.txt\n");
  });

  it("also as the first call of a new sandbox", async () => {
    const sandbox = sandboxes.create("bomb-first");
    const refused = await apiCall(`/v1/sandboxes/${sandbox.id}/archive`, { method: "PUT", body: await gzippedZeros(64) });
    expect(await refused.json()).toMatchObject({ code: "INVALID_ARCHIVE" });
    expect((await sandbox.exec("echo still here")).stdout).toBe("still here\n");
  });
});
