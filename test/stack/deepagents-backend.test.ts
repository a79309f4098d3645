/**
 * EdgeDeepAgentsSandbox against the real stack: the backend primitives (execute, uploadFiles,
 * downloadFiles) and lifecycle (create, initialize, close) as deepagents providers define them.
 */
import { SandboxError } from "deepagents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EdgeDeepAgentsSandbox } from "../../src/adapters/deepagents/index.ts";
import { getHttpSandbox } from "../../src/client/index.ts";
import { httpConnection } from "./helpers.ts";

let sandbox: EdgeDeepAgentsSandbox;
beforeAll(async () => {
  sandbox = await EdgeDeepAgentsSandbox.create({
    ...httpConnection("deep-backend"),
    initialFiles: { "notes/hello.txt": "hello\n", "raw.bin": new Uint8Array([0, 255, 10, 13]) },
  });
});
afterAll(() => sandbox.close());

const allBytes = new Uint8Array(256).map((_, i) => i);

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// The tests share one sandbox but not their files: they run at once.
describe.concurrent("lifecycle", () => {
  it("is the sandbox id, running after create, with the initial files written", async () => {
    expect(sandbox.id).toBe(sandbox.client.id);
    expect(sandbox.isRunning).toBe(true);
    expect(sandbox.workspace).toMatch(/\/workspace$/);
    expect((await sandbox.execute("cat notes/hello.txt")).output).toBe("hello\n");
    const [raw] = await sandbox.downloadFiles(["raw.bin"]);
    expect(raw!.content).toEqual(new Uint8Array([0, 255, 10, 13]));
  });

  it("must be initialized once, and says so with a code", async () => {
    const fresh = new EdgeDeepAgentsSandbox(httpConnection("deep-fresh"));
    expect(fresh.isRunning).toBe(false);
    await expect(fresh.execute("true")).rejects.toMatchObject({ name: "SandboxError", code: "NOT_INITIALIZED" });
    await fresh.initialize();
    await expect(fresh.initialize()).rejects.toMatchObject({ code: "ALREADY_INITIALIZED" });
    await fresh.close();
  });

  it("fails initialize with a clear error on a wrong token", async () => {
    const wrong = new EdgeDeepAgentsSandbox({ ...httpConnection("deep-token"), token: "nope" });
    const error = await wrong.initialize().catch((e: unknown) => e);
    expect(SandboxError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "UNAUTHORIZED", message: expect.stringMatching(/Unauthorized|token/i) });
    expect(wrong.isRunning).toBe(false);
  });

  it("close() destroys the sandbox: its processes end; its files are there for the next backend", async () => {
    const doomed = await EdgeDeepAgentsSandbox.create({ ...httpConnection("deep-close"), initialFiles: { "keep.txt": "kept" } });
    const service = getHttpSandbox(doomed.id, { url: httpConnection("x").url, token: httpConnection("x").token });
    const background = await service.startProcess("sleep 60");
    await doomed.close();
    expect(doomed.isRunning).toBe(false);
    await expect(doomed.execute("true")).rejects.toMatchObject({ code: "NOT_INITIALIZED" });
    expect(await service.getProcess(background.id)).toBeNull();
    const again = await EdgeDeepAgentsSandbox.create({ ...httpConnection("x"), sandboxId: doomed.id });
    expect((await again.execute("cat keep.txt")).output).toBe("kept");
    await again.close();
  });
});

describe.concurrent("execute", () => {
  it("joins stdout and stderr in the order they came, with the exit code", async () => {
    const result = await sandbox.execute("echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three; exit 5");
    expect(result).toEqual({ output: "one\ntwo\nthree\n", exitCode: 5, truncated: false });
  });

  it("ends a command at its timeout: a sleep longer than the test ends at 0.1 s, non-zero", async () => {
    const result = await sandbox.execute("echo begun; sleep 1000", { timeout: 0.1 });
    expect(result.exitCode).toBe(124);
    // The output so far, then a note that it timed out, as deepagents' own shells say it.
    expect(result.output).toMatch(/^(begun\n)?Error: Command timed out after 100 ms/);
  });

  it("keeps at most maxOutputBytes and says it truncated, still reporting the exit code", async () => {
    const small = new EdgeDeepAgentsSandbox({ ...httpConnection("x"), sandboxId: sandbox.id, maxOutputBytes: 10 });
    await small.initialize();
    const small5 = new EdgeDeepAgentsSandbox({ ...httpConnection("x"), sandboxId: sandbox.id, maxOutputBytes: 5 });
    await small5.initialize();
    const result = await small5.execute("printf 'żżżżżż'; exit 3");
    expect(result.truncated).toBe(true);
    expect(result.exitCode).toBe(3);
    // 5 bytes of two-byte characters: cut at the character boundary below.
    expect(result.output).toBe("żż");
    expect(await small.execute("printf 0123456789")).toEqual({ output: "0123456789", exitCode: 0, truncated: false });
  });

  it("fails with COMMAND_FAILED, and file transfers fail whole, when the service can no longer be reached", async () => {
    let reachable = true;
    const cutOff: typeof fetch = (input, init) => (reachable ? fetch(input, init) : Promise.reject(new TypeError("fetch failed")));
    const backend = new EdgeDeepAgentsSandbox({ ...httpConnection("x"), sandboxId: sandbox.id, http: { fetch: cutOff } });
    await backend.initialize();
    reachable = false;
    await expect(backend.execute("true")).rejects.toMatchObject({ code: "COMMAND_FAILED", message: expect.stringContaining("fetch failed") });
    await expect(backend.uploadFiles([["x.txt", new Uint8Array([1])]])).rejects.toMatchObject({ code: "FILE_OPERATION_FAILED" });
    await expect(backend.downloadFiles(["notes/hello.txt"])).rejects.toMatchObject({ code: "FILE_OPERATION_FAILED" });
  });
});

describe.concurrent("uploadFiles and downloadFiles", () => {
  it("move bytes both ways unchanged, small and large", async () => {
    const large = new Uint8Array(3 * 1024 * 1024 + 7);
    for (let i = 0; i < large.length; i++) large[i] = (i * 131 + (i >> 9)) & 0xff;
    const uploaded = await sandbox.uploadFiles([
      ["bytes/all.bin", allBytes],
      [`${sandbox.workspace}/bytes/large.bin`, large],
      ["bytes/empty", new Uint8Array()],
    ]);
    expect(uploaded).toEqual([
      { path: "bytes/all.bin", error: null },
      { path: `${sandbox.workspace}/bytes/large.bin`, error: null },
      { path: "bytes/empty", error: null },
    ]);
    const [all, big, empty] = await sandbox.downloadFiles(["bytes/all.bin", "bytes/large.bin", "bytes/empty"]);
    expect(all!.content).toEqual(allBytes);
    expect(big!.content!.length).toBe(large.length);
    expect(sameBytes(big!.content!, large)).toBe(true);
    expect(empty).toEqual({ path: "bytes/empty", content: new Uint8Array(), error: null });
    expect((await sandbox.execute("sha256sum bytes/all.bin | cut -c1-16")).output).toBe("40aff2e9d2d8922e\n");
  });

  it("report each file's own error and still transfer the others", async () => {
    await sandbox.execute("mkdir -p adir");
    // The sandbox's server itself is the one place its file calls are refused (these sandboxes run
    // without a container, so any other absolute path would be this machine's own).
    const downloads = await sandbox.downloadFiles(["missing.txt", "adir", "/proc/self/environ", "notes/hello.txt", "a\u0000b"]);
    expect(downloads.map((d) => d.error)).toEqual(["file_not_found", "is_directory", "permission_denied", null, "invalid_path"]);
    expect(new TextDecoder().decode(downloads[3]!.content!)).toBe("hello\n");

    const uploads = await sandbox.uploadFiles([
      ["adir", new Uint8Array([1])],
      ["/proc/self/edge-sandbox-test", new Uint8Array([1])],
      ["ok.txt", new TextEncoder().encode("ok")],
    ]);
    expect(uploads.map((u) => u.error)).toEqual(["is_directory", "permission_denied", null]);
  });
});
