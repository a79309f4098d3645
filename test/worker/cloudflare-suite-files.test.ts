/**
 * Cloudflare's file-operation cases (their file-operations workflow), ported to getSandbox: the errors
 * of deleteFile, listFiles, renameFile and moveFile, hidden files, binary reads, and writing a file from
 * a stream. Paths are absolute under /workspace, as their tests give them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

const notFound = /not found|does not exist|no such file/i;
/** A 1×1 PNG. */
const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("file operations", () => {
  const sandbox = sandboxes.create("cf-files");
  const dir = "/workspace/file-ops";

  it("refuses to delete a directory with deleteFile", async () => {
    await sandbox.mkdir(`${dir}/test-dir`, { recursive: true });
    await expect(sandbox.deleteFile(`${dir}/test-dir`)).rejects.toThrow(/director/i);
    expect((await sandbox.exec(`ls -d ${dir}/test-dir`)).success).toBe(true);
  });

  it("says a file that does not exist was not found (deleteFile)", async () => {
    await expect(sandbox.deleteFile(`${dir}/this-file-does-not-exist.txt`)).rejects.toMatchObject({ code: "FILE_NOT_FOUND", httpStatus: 404, message: expect.stringMatching(notFound) });
  });

  it("listFiles: a missing directory is not found, a file is not a directory", async () => {
    await expect(sandbox.listFiles(`${dir}/nonexistent-directory`)).rejects.toMatchObject({ code: "FILE_NOT_FOUND", httpStatus: 404 });
    await sandbox.writeFile(`${dir}/test-file.txt`, "content");
    await expect(sandbox.listFiles(`${dir}/test-file.txt`)).rejects.toThrow(/not a directory/i);
  });

  it("lists hidden files only with includeHidden", async () => {
    const hidden = `${dir}/.hidden/foo`;
    await sandbox.mkdir(`${hidden}/bar`, { recursive: true });
    await sandbox.writeFile(`${hidden}/visible1.txt`, "1");
    await sandbox.writeFile(`${hidden}/visible2.txt`, "2");
    await sandbox.writeFile(`${hidden}/.hiddenfile.txt`, "h");
    const plain = await sandbox.listFiles(hidden);
    expect(plain.files.map((f) => f.name).sort()).toEqual(["bar", "visible1.txt", "visible2.txt"]);
    const all = await sandbox.listFiles(hidden, { includeHidden: true });
    expect(all.files.map((f) => f.name).sort()).toEqual([".hiddenfile.txt", "bar", "visible1.txt", "visible2.txt"]);
  });

  it("says the source of a rename or a move was not found", async () => {
    await expect(sandbox.renameFile(`${dir}/source.txt`, `${dir}/dest.txt`)).rejects.toMatchObject({ httpStatus: 404, message: expect.stringMatching(notFound) });
    await sandbox.mkdir(`${dir}/dest-dir`, { recursive: true });
    await expect(sandbox.moveFile(`${dir}/source.txt`, `${dir}/dest-dir/source.txt`)).rejects.toMatchObject({ httpStatus: 404, message: expect.stringMatching(notFound) });
  });

  it("reads a binary file as base64 with its MIME type", async () => {
    await sandbox.writeFile(`${dir}/test.png`, PNG_BASE64, { encoding: "base64" });
    const file = await sandbox.readFile(`${dir}/test.png`);
    expect(file).toMatchObject({ encoding: "base64", isBinary: true, mimeType: expect.stringMatching(/image\/png/) });
    expect(file.content).toBe(PNG_BASE64);
    expect(file.size).toBeGreaterThan(0);
  });

  it("writes a file from a stream and reads it back, keeping its mode", async () => {
    const body = new Blob(["#!/bin/sh\n", "echo streamed\n"]).stream();
    await sandbox.writeFileStream(`${dir}/streamed.sh`, body, { mode: 0o755 });
    expect((await sandbox.readFile(`${dir}/streamed.sh`)).content).toBe("#!/bin/sh\necho streamed\n");
    expect((await sandbox.exec(`${dir}/streamed.sh`)).stdout).toBe("streamed\n");
  });
});
