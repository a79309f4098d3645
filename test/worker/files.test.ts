/**
 * Files through getSandbox → Durable Object → container: every operation, binary round trip, a
 * 20 MB file streamed both ways through the chain, paths anywhere in the sandbox (the server's own
 * process refused), missing files.
 */
import { afterAll, describe, expect, it } from "vitest";
import { FileNotFoundError } from "../../src/client/index.ts";
import { patternStream, sandboxPool, sha256Hex } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

const ALL_BYTES = Uint8Array.from({ length: 512 }, (_, i) => i % 256);

describe("files", () => {
  const sandbox = sandboxes.create("files");

  it("writes and reads text, with size, MIME type and binary detection", async () => {
    expect(await sandbox.writeFile("notes/hello.txt", "héllo wörld\n")).toMatchObject({ path: expect.stringMatching(/\/notes\/hello\.txt$/), bytesWritten: 14 });
    const read = await sandbox.readFile("notes/hello.txt");
    expect(read).toMatchObject({ content: "héllo wörld\n", encoding: "utf8", size: 14, mimeType: "text/plain", isBinary: false });
    expect((await sandbox.readFile("notes/hello.txt", { encoding: "base64" })).content).toBe(btoa(String.fromCharCode(...new TextEncoder().encode("héllo wörld\n"))));
    // What a command sees is what was written.
    expect((await sandbox.exec("cat notes/hello.txt")).stdout).toBe("héllo wörld\n");
    await sandbox.writeFile("run.sh", "#!/bin/sh\necho ran\n", { mode: 0o755 });
    expect((await sandbox.exec("./run.sh")).stdout).toBe("ran\n");
  });

  it("round-trips binary content as bytes and as base64", async () => {
    await sandbox.writeFile("blob.bin", ALL_BYTES);
    const read = await sandbox.readFile("blob.bin");
    expect(read).toMatchObject({ encoding: "base64", size: 512, isBinary: true, mimeType: "application/octet-stream" });
    expect(Uint8Array.from(atob(read.content), (c) => c.charCodeAt(0))).toEqual(ALL_BYTES);
    expect((await sandbox.exec("od -An -tu1 -N4 -j254 blob.bin")).stdout.trim().split(/\s+/)).toEqual(["254", "255", "0", "1"]);

    await sandbox.writeFile("again.bin", read.content, { encoding: "base64" });
    expect((await sandbox.exec("cmp blob.bin again.bin && echo same")).stdout).toBe("same\n");
  });

  it("makes, lists, renames, moves and deletes", async () => {
    expect(await sandbox.mkdir("tree/a/b", { recursive: true })).toMatchObject({ created: true });
    await expect(sandbox.mkdir("tree/x/y")).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
    await sandbox.writeFile("tree/a/b/leaf.txt", "leaf");
    await sandbox.writeFile("tree/.hidden", "h");

    const shallow = await sandbox.listFiles("tree");
    expect(shallow.files.map((f) => f.name)).toEqual(["a"]);
    const all = await sandbox.listFiles("tree", { recursive: true, includeHidden: true });
    expect(all.files.map((f) => f.relativePath).sort()).toEqual([".hidden", "a", "a/b", "a/b/leaf.txt"]);
    const leaf = all.files.find((f) => f.name === "leaf.txt")!;
    expect(leaf).toMatchObject({ type: "file", size: 4, mode: expect.stringMatching(/^0[0-7]{3}$/) });
    expect(Date.parse(leaf.modifiedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(all).toMatchObject({ count: 4, truncated: false });

    expect(await sandbox.exists("tree/a")).toMatchObject({ exists: true, type: "directory" });
    await sandbox.renameFile("tree/a/b/leaf.txt", "tree/a/b/renamed.txt");
    expect(await sandbox.exists("tree/a/b/leaf.txt")).toMatchObject({ exists: false });
    await sandbox.mkdir("elsewhere");
    await sandbox.moveFile("tree/a/b/renamed.txt", "elsewhere");
    expect((await sandbox.readFile("elsewhere/renamed.txt")).content).toBe("leaf");
    await sandbox.writeFile("elsewhere/other.txt", "other");
    await expect(sandbox.renameFile("elsewhere/other.txt", "elsewhere/renamed.txt")).rejects.toMatchObject({ code: "FILE_EXISTS" });
    await sandbox.renameFile("elsewhere/other.txt", "elsewhere/renamed.txt", { overwrite: true });
    expect((await sandbox.readFile("elsewhere/renamed.txt")).content).toBe("other");

    await expect(sandbox.deleteFile("tree")).rejects.toMatchObject({ code: "IS_A_DIRECTORY" });
    await sandbox.deleteFile("tree", { recursive: true });
    await sandbox.deleteFile("elsewhere/renamed.txt");
    expect((await sandbox.exec("ls tree elsewhere/renamed.txt 2>&1 | wc -l")).stdout.trim()).toBe("2");
  });

  it("streams a 20 MB file in and out through the whole chain", async () => {
    const size = 20 * 1024 * 1024;
    const expected = await sha256Hex(patternStream(size));
    expect(await sandbox.writeFileStream("big/stream.bin", patternStream(size))).toMatchObject({ bytesWritten: size });
    // The container has exactly those bytes…
    expect((await sandbox.exec("sha256sum big/stream.bin")).stdout.split(" ")[0]).toBe(expected.hex);
    // …and hands them back, as a stream.
    expect(await sha256Hex(await sandbox.readFileStream("big/stream.bin"))).toEqual({ hex: expected.hex, bytes: size });
    // Larger than a whole-file read returns: the stream is the way.
    await expect(sandbox.readFile("big/stream.bin")).rejects.toMatchObject({ code: "PAYLOAD_TOO_LARGE", httpStatus: 413 });
  });

  it("takes paths anywhere in the sandbox, refusing only the server's own process", async () => {
    // In a container of its own, so / is the sandbox's (here, without one, it would be the machine's).
    const contained = sandboxes.create("files-anywhere", { isolation: "bwrap" });
    await contained.writeFile("/tmp/x/note.txt", "outside the workspace");
    expect((await contained.exec("cat /tmp/x/note.txt")).stdout).toBe("outside the workspace");
    expect((await contained.readFile("/etc/hostname")).content).toBe((await contained.exec("cat /etc/hostname")).stdout);
    expect(await sha256Hex(await contained.readFileStream("/tmp/x/note.txt"))).toMatchObject({ bytes: 21 });
    await contained.writeFileStream("/var/tmp/streamed.bin", patternStream(1000));
    expect((await contained.exec("stat -c %s /var/tmp/streamed.bin")).stdout).toBe("1000\n");
    expect((await contained.listFiles("/tmp/x")).files.map((f) => f.absolutePath)).toEqual(["/tmp/x/note.txt"]);
    expect(await contained.exists("/usr/bin")).toMatchObject({ exists: true, type: "directory" });
    await contained.moveFile("/tmp/x/note.txt", "/workspace");
    expect((await contained.readFile("note.txt")).content).toBe("outside the workspace");
    await contained.mkdir("/tmp/made/below", { recursive: true });
    await contained.deleteFile("/tmp/made", { recursive: true });
    expect(await contained.exists("/tmp/made")).toMatchObject({ exists: false });
    // The container's root is writable, as a container's is; its system folders are read-only: a coded 403, as a command gets EROFS.
    await contained.writeFile("/test-file.txt", "at the root");
    expect((await contained.exec("cat /test-file.txt")).stdout).toBe("at the root");
    await expect(contained.mkdir("/usr/planted")).rejects.toMatchObject({ code: "PERMISSION_DENIED", httpStatus: 403 });
    expect((await contained.exec("ls /usr/planted 2>&1 | grep -c 'No such'")).stdout.trim()).toBe("1");
    // The server's own process, however it is named or linked to.
    await contained.exec("ln -sfn /proc/self server");
    const attempts: [string, () => Promise<unknown>][] = [
      ["read environ", () => contained.readFile("/proc/self/environ")],
      ["stream read mem", () => contained.readFileStream("/proc/self/mem")],
      ["read through a planted link", () => contained.readFile("server/environ")],
      ["stream write descriptor", () => contained.writeFileStream("/dev/fd/1", patternStream(10))],
      ["list descriptors", () => contained.listFiles("/proc/thread-self/fd")],
      ["stdin", () => contained.readFile("/dev/stdin")],
    ];
    for (const [what, attempt] of attempts) {
      const error = await attempt().then(() => undefined, (e: unknown) => e);
      expect(error, what).toMatchObject({ code: "PERMISSION_DENIED", httpStatus: 403 });
    }
  });

  it("reports missing files as FILE_NOT_FOUND (404)", async () => {
    for (const attempt of [
      () => sandbox.readFile("nope.txt"),
      () => sandbox.readFileStream("nope.txt"),
      () => sandbox.deleteFile("nope.txt"),
      () => sandbox.listFiles("nope"),
      () => sandbox.renameFile("nope.txt", "still-nope.txt"),
    ]) {
      const error = await attempt().then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(FileNotFoundError);
      expect(error).toMatchObject({ httpStatus: 404 });
    }
    expect(await sandbox.exists("nope.txt")).toMatchObject({ exists: false });
  });

  it("validates arguments before they reach the container", async () => {
    await expect(sandbox.writeFile("", "x")).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.writeFile("bad.txt", "%%%", { encoding: "base64" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.writeFile("mode.txt", "x", { mode: "999" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });
});
