/**
 * The JSON file API on real directories: write/read round trips (text, every byte value, MIME types,
 * modes, no setuid carried over), directory operations, paths anywhere in the sandbox (absolute,
 * `..`, symlinks wherever they lead; `/workspace` naming the workspace), configured read-only paths
 * honoured, and filesystem refusals (read-only, loops, long names) answered as coded 4xx, never 500.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { startSandbox, type SandboxServer } from "./sandbox-helpers.ts";

let t: SandboxServer;
/** Outside the workspace: must stay untouched. */
let outside: string;
let extraRw: string;
let extraRo: string;

beforeAll(async () => {
  outside = mkdtempSync(join(tmpdir(), "sandbox-outside-"));
  writeFileSync(join(outside, "secret.txt"), "top secret");
  extraRw = mkdtempSync(join(tmpdir(), "sandbox-rw-"));
  extraRo = mkdtempSync(join(tmpdir(), "sandbox-ro-"));
  writeFileSync(join(extraRo, "readme.txt"), "read only");
  t = await startSandbox({ readWritePaths: [extraRw], readOnlyPaths: [extraRo], maxJsonFileBytes: 64 * 1024 });
});
afterAll(async () => {
  await t.close();
  for (const dir of [outside, extraRw, extraRo]) rmSync(dir, { recursive: true, force: true });
});

const files = (op: string, body: unknown) => t.post(`/api/files/${op}`, body);
const ws = (...parts: string[]) => join(t.workspace, ...parts);

describe("write and read", () => {
  it("round-trips text, creating parent directories", async () => {
    const write = await files("write", { path: "notes/deep/hello.txt", content: "héllo wörld\n" });
    expect(write).toMatchObject({ status: 200, body: { success: true, path: ws("notes/deep/hello.txt"), bytesWritten: 14 } });
    expect(readFileSync(ws("notes/deep/hello.txt"), "utf8")).toBe("héllo wörld\n");

    const read = await files("read", { path: "notes/deep/hello.txt" });
    expect(read.body).toMatchObject({ content: "héllo wörld\n", encoding: "utf8", size: 14, mimeType: "text/plain", isBinary: false });
  });

  it("round-trips every byte value through base64 and detects binary", async () => {
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256));
    await files("write", { path: "blob.bin", content: bytes.toString("base64"), encoding: "base64" });
    expect(readFileSync(ws("blob.bin")).equals(bytes)).toBe(true);
    const read = await files("read", { path: "blob.bin" });
    expect(read.body).toMatchObject({ encoding: "base64", isBinary: true, size: 4096, mimeType: "application/octet-stream" });
    expect(Buffer.from(read.body.content, "base64").equals(bytes)).toBe(true);
    // Text asked for explicitly as base64 comes back as base64.
    const asBase64 = await files("read", { path: "notes/deep/hello.txt", encoding: "base64" });
    expect(Buffer.from(asBase64.body.content, "base64").toString()).toBe("héllo wörld\n");
  });

  it("round-trips large contents exactly, however their body is written", async () => {
    const text = "wörld 🌍 \"quoted\" ".repeat(1500);
    const plain = "wörld 🌍 ".repeat(3000);
    for (const [name, content] of [["escaped.txt", text], ["plain.txt", plain]] as const) {
      const write = await files("write", { path: name, content });
      expect(write).toMatchObject({ status: 200, body: { bytesWritten: Buffer.byteLength(content) } });
      expect(readFileSync(ws(name), "utf8")).toBe(content);
      expect((await files("read", { path: name })).body).toMatchObject({ content, encoding: "utf8", size: Buffer.byteLength(content) });
    }
    const bytes = Buffer.from(Array.from({ length: 40_000 }, (_, i) => (i * 7) % 256));
    await files("write", { path: "large.bin", content: bytes.toString("base64"), encoding: "base64" });
    expect(readFileSync(ws("large.bin")).equals(bytes)).toBe(true);
    expect((await files("read", { path: "large.bin" })).body).toMatchObject({ content: bytes.toString("base64"), encoding: "base64" });
    // Raw bodies: a control byte JSON forbids in a string, and a duplicate key (the last one counts).
    const raw = await files("write", `{"path":"raw.txt","content":"${plain}\u0007${plain}"}`);
    expect(raw).toMatchObject({ status: 400, body: { code: "INVALID_JSON" } });
    expect(existsSync(ws("raw.txt"))).toBe(false);
    await files("write", `{"content":"first","path":"twice.txt","content":"${plain}"}`);
    expect(readFileSync(ws("twice.txt"), "utf8")).toBe(plain);
  });

  it("names MIME types by extension", async () => {
    await files("write", { path: "data.json", content: "{}" });
    await files("write", { path: "image.png", content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]).toString("base64"), encoding: "base64" });
    expect((await files("read", { path: "data.json" })).body.mimeType).toBe("application/json");
    expect((await files("read", { path: "image.png" })).body).toMatchObject({ mimeType: "image/png", isBinary: true });
  });

  it("replaces a file whole, keeps its mode, and applies a given mode", async () => {
    await files("write", { path: "script.sh", content: "echo one", mode: "755" });
    expect(statSync(ws("script.sh")).mode & 0o777).toBe(0o755);
    await files("write", { path: "script.sh", content: "echo two" });
    expect(statSync(ws("script.sh")).mode & 0o777).toBe(0o755);
    expect((await t.exec({ command: "./script.sh" })).body.stdout).toBe("two\n");
  });

  it("never carries a setuid or setgid bit a command left onto content the server writes", async () => {
    expect((await t.exec({ command: "printf x > planted && chmod 6755 planted && stat -c %a planted" })).body.stdout).toBe("6755\n");
    await files("write", { path: "planted", content: "#!/bin/sh\nid\n" });
    expect(statSync(ws("planted")).mode & 0o7777).toBe(0o755);
  });

  it("reports missing files, directories and bad parents with their codes", async () => {
    expect(await files("read", { path: "missing.txt" })).toMatchObject({ status: 404, body: { code: "FILE_NOT_FOUND" } });
    expect(await files("read", { path: "notes" })).toMatchObject({ status: 409, body: { code: "IS_A_DIRECTORY" } });
    expect(await files("write", { path: "notes", content: "x" })).toMatchObject({ status: 409, body: { code: "IS_A_DIRECTORY" } });
    expect(await files("write", { path: "data.json/child", content: "x" })).toMatchObject({ status: 409, body: { code: "NOT_A_DIRECTORY" } });
    expect(await files("write", { path: "no/parent.txt", content: "x", createParents: false })).toMatchObject({
      status: 404,
      body: { code: "FILE_NOT_FOUND" },
    });
    expect(await files("write", { path: "bad.bin", content: "%%%", encoding: "base64" })).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
    expect(await files("read", {})).toMatchObject({ status: 400, body: { code: "INVALID_REQUEST" } });
  });

  it("caps JSON reads and writes (413) and points to the stream route", async () => {
    const big = "x".repeat(64 * 1024 + 1);
    const write = await files("write", { path: "big.txt", content: big });
    expect(write).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } });
    expect(existsSync(ws("big.txt"))).toBe(false);
    writeFileSync(ws("big.txt"), big);
    const read = await files("read", { path: "big.txt" });
    expect(read).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } });
    expect(read.body.message).toContain("/api/files/stream");
  });
});

describe("directories and entries", () => {
  it("mkdir: recursive creates parents and accepts existing; plain mkdir does not", async () => {
    expect((await files("mkdir", { path: "a/b/c", recursive: true })).body).toMatchObject({ path: ws("a/b/c"), created: true });
    expect(statSync(ws("a/b/c")).isDirectory()).toBe(true);
    expect((await files("mkdir", { path: "a/b/c", recursive: true })).body.created).toBe(false);
    expect(await files("mkdir", { path: "a/b/c" })).toMatchObject({ status: 409, body: { code: "FILE_EXISTS" } });
    expect(await files("mkdir", { path: "x/y/z" })).toMatchObject({ status: 404, body: { code: "FILE_NOT_FOUND" } });
  });

  it("lists with type, size, mode and mtime; recursive and hidden on request", async () => {
    mkdirSync(ws("tree/sub/.hidden-dir"), { recursive: true });
    writeFileSync(ws("tree/top.txt"), "12345");
    writeFileSync(ws("tree/.dotfile"), "");
    writeFileSync(ws("tree/sub/inner.txt"), "x");
    writeFileSync(ws("tree/sub/.hidden-dir/deep.txt"), "x");
    symlinkSync("top.txt", ws("tree/link"));

    const flat = await files("list", { path: "tree" });
    expect(flat.body.files.map((f: { relativePath: string }) => f.relativePath)).toEqual(["link", "sub", "top.txt"]);
    const top = flat.body.files.find((f: { name: string }) => f.name === "top.txt");
    expect(top).toMatchObject({ type: "file", size: 5, mode: "0644", absolutePath: ws("tree/top.txt") });
    expect(Date.parse(top.modifiedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(flat.body.files[0]).toMatchObject({ type: "symlink", target: "top.txt" });
    expect(flat.body.files[1]).toMatchObject({ type: "directory" });

    const deep = await files("list", { path: "tree", recursive: true });
    expect(deep.body.files.map((f: { relativePath: string }) => f.relativePath)).toEqual(["link", "sub", "sub/inner.txt", "top.txt"]);
    const all = await files("list", { path: "tree", recursive: true, includeHidden: true });
    expect(all.body.files.map((f: { relativePath: string }) => f.relativePath)).toEqual([
      ".dotfile", "link", "sub", "sub/.hidden-dir", "sub/.hidden-dir/deep.txt", "sub/inner.txt", "top.txt",
    ]);
    expect(all.body).toMatchObject({ count: 7, truncated: false });
    const capped = await files("list", { path: "tree", recursive: true, includeHidden: true, maxEntries: 3 });
    expect(capped.body).toMatchObject({ count: 3, truncated: true });

    expect(await files("list", { path: "tree/top.txt" })).toMatchObject({ status: 409, body: { code: "NOT_A_DIRECTORY" } });
    expect(await files("list", { path: "nowhere" })).toMatchObject({ status: 404, body: { code: "FILE_NOT_FOUND" } });
    const root = await files("list", {});
    expect(root.body.path).toBe(t.workspace);
  });

  it("exists reports type, and false for missing", async () => {
    writeFileSync(ws("here.txt"), "");
    expect((await files("exists", { path: "here.txt" })).body).toMatchObject({ exists: true, type: "file" });
    expect((await files("exists", { path: "a" })).body).toMatchObject({ exists: true, type: "directory" });
    expect((await files("exists", { path: "not-here" })).body).toMatchObject({ exists: false });
    expect((await files("exists", { path: "here.txt/below" })).body).toMatchObject({ exists: false });
  });

  it("delete: files, directories only with recursive, never the workspace", async () => {
    writeFileSync(ws("doomed.txt"), "");
    expect((await files("delete", { path: "doomed.txt" })).status).toBe(200);
    expect(existsSync(ws("doomed.txt"))).toBe(false);
    expect(await files("delete", { path: "doomed.txt" })).toMatchObject({ status: 404, body: { code: "FILE_NOT_FOUND" } });
    mkdirSync(ws("doomed-dir/inner"), { recursive: true });
    expect(await files("delete", { path: "doomed-dir" })).toMatchObject({ status: 409, body: { code: "IS_A_DIRECTORY" } });
    expect((await files("delete", { path: "doomed-dir", recursive: true })).status).toBe(200);
    expect(existsSync(ws("doomed-dir"))).toBe(false);
    expect(await files("delete", { path: ".", recursive: true })).toMatchObject({ status: 403, body: { code: "PERMISSION_DENIED" } });
    expect(existsSync(t.workspace)).toBe(true);
  });

  it("rename: to exactly the new path, refusing to clobber unless asked", async () => {
    writeFileSync(ws("r1.txt"), "one");
    writeFileSync(ws("r2.txt"), "two");
    expect(await files("rename", { oldPath: "r1.txt", newPath: "r2.txt" })).toMatchObject({ status: 409, body: { code: "FILE_EXISTS" } });
    expect((await files("rename", { oldPath: "r1.txt", newPath: "r3.txt" })).body).toMatchObject({ oldPath: ws("r1.txt"), newPath: ws("r3.txt") });
    expect(readFileSync(ws("r3.txt"), "utf8")).toBe("one");
    expect((await files("rename", { oldPath: "r3.txt", newPath: "r2.txt", overwrite: true })).status).toBe(200);
    expect(readFileSync(ws("r2.txt"), "utf8")).toBe("one");
    expect(await files("rename", { oldPath: "nothing", newPath: "r9.txt" })).toMatchObject({ status: 404, body: { code: "FILE_NOT_FOUND" } });
  });

  it("move: into an existing directory, or to a new name; across filesystems too", async () => {
    mkdirSync(ws("dest"));
    writeFileSync(ws("m.txt"), "move me");
    expect((await files("move", { sourcePath: "m.txt", destinationPath: "dest" })).body.destinationPath).toBe(ws("dest/m.txt"));
    expect(readFileSync(ws("dest/m.txt"), "utf8")).toBe("move me");
    expect((await files("move", { sourcePath: "dest/m.txt", destinationPath: "moved.txt" })).status).toBe(200);
    expect(existsSync(ws("moved.txt"))).toBe(true);
    expect(await files("move", { sourcePath: "dest", destinationPath: "dest/inside" })).toMatchObject({ status: 400 });
    // Into a configured read-write path (absolute) and back.
    expect((await files("move", { sourcePath: "moved.txt", destinationPath: join(extraRw, "moved.txt") })).status).toBe(200);
    expect(readFileSync(join(extraRw, "moved.txt"), "utf8")).toBe("move me");
  });
});

describe("paths anywhere in the sandbox", () => {
  it("reads, writes, lists, moves and deletes absolute paths outside the workspace, and .. from it", async () => {
    const secret = join(outside, "secret.txt");
    expect((await files("read", { path: secret })).body).toMatchObject({ path: secret, content: "top secret" });
    expect((await files("read", { path: relative(t.workspace, secret) })).body).toMatchObject({ path: secret, content: "top secret" });
    expect((await files("write", { path: join(outside, "deep/new.txt"), content: "made" })).status).toBe(200);
    expect(readFileSync(join(outside, "deep/new.txt"), "utf8")).toBe("made");
    expect((await files("list", { path: outside })).body.files.map((f: { name: string }) => f.name)).toEqual(["deep", "secret.txt"]);
    expect(await files("exists", { path: secret })).toMatchObject({ status: 200, body: { exists: true, type: "file" } });
    expect((await files("mkdir", { path: join(outside, "made/below"), recursive: true })).status).toBe(200);
    expect((await files("rename", { oldPath: join(outside, "deep/new.txt"), newPath: join(outside, "renamed.txt") })).status).toBe(200);
    expect((await files("move", { sourcePath: join(outside, "renamed.txt"), destinationPath: "fetched.txt" })).status).toBe(200);
    expect(readFileSync(ws("fetched.txt"), "utf8")).toBe("made");
    expect((await files("delete", { path: join(outside, "made"), recursive: true })).status).toBe(200);
    expect(readdirSync(outside).sort()).toEqual(["deep", "secret.txt"]);
    const upload = await fetch(`${t.url}/api/files/stream?path=${encodeURIComponent(join(outside, "up.bin"))}`, { method: "PUT", body: "streamed" });
    expect(upload.status).toBe(200);
    expect(await (await fetch(`${t.url}/api/files/stream?path=${encodeURIComponent(join(outside, "up.bin"))}`)).text()).toBe("streamed");
  });

  it("reads the system's files, as a command can", async () => {
    expect((await files("read", { path: "/etc/passwd" })).body.content).toBe(readFileSync("/etc/passwd", "utf8"));
    expect((await files("list", { path: "/" })).body.files.map((f: { name: string }) => f.name)).toContain("etc");
  });

  it("takes /workspace as the workspace, wherever its folder is", async () => {
    expect((await files("write", { path: "/workspace/named.txt", content: "by name" })).body).toMatchObject({ path: ws("named.txt") });
    expect(readFileSync(ws("named.txt"), "utf8")).toBe("by name");
    expect((await files("read", { path: "/workspace/../workspace/named.txt" })).body.content).toBe("by name");
    expect((await files("list", { path: "/workspace" })).body.path).toBe(t.workspace);
  });

  it("accepts absolute paths inside the workspace", async () => {
    await files("write", { path: ws("absolute.txt"), content: "abs" });
    expect((await files("read", { path: ws("absolute.txt") })).body.content).toBe("abs");
  });

  it("follows symlinks wherever they lead, and deletes a link as a link", async () => {
    symlinkSync(outside, ws("escape-dir"));
    symlinkSync(join(outside, "secret.txt"), ws("escape-file"));
    expect((await files("read", { path: "escape-file" })).body.content).toBe("top secret");
    expect((await files("read", { path: "escape-dir/secret.txt" })).body.content).toBe("top secret");
    expect((await files("write", { path: "escape-dir/through.txt", content: "x" })).status).toBe(200);
    expect(readFileSync(join(outside, "through.txt"), "utf8")).toBe("x");
    expect((await files("list", { path: "escape-dir" })).body.files.map((f: { name: string }) => f.name)).toContain("through.txt");
    // The link itself is an entry of the workspace: deleting it removes the link, not what it points to.
    expect((await files("delete", { path: "escape-file" })).status).toBe(200);
    expect(existsSync(ws("escape-file"))).toBe(false);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("top secret");
  });

  it("follows symlinks that stay inside", async () => {
    writeFileSync(ws("real.txt"), "real");
    symlinkSync("real.txt", ws("alias.txt"));
    expect((await files("read", { path: "alias.txt" })).body.content).toBe("real");
    await files("write", { path: "alias.txt", content: "via alias" });
    expect(readFileSync(ws("real.txt"), "utf8")).toBe("via alias");
  });

  it("lets configured read-only paths be read but not written, read-write paths both", async () => {
    expect((await files("read", { path: join(extraRo, "readme.txt") })).body.content).toBe("read only");
    const readOnly = { status: 403, body: { code: "PERMISSION_DENIED" } };
    expect(await files("write", { path: join(extraRo, "readme.txt"), content: "x" })).toMatchObject(readOnly);
    expect(await files("delete", { path: join(extraRo, "readme.txt") })).toMatchObject(readOnly);
    expect(readFileSync(join(extraRo, "readme.txt"), "utf8")).toBe("read only");
    expect((await files("write", { path: join(extraRw, "ok.txt"), content: "fine" })).status).toBe(200);
    expect(readFileSync(join(extraRw, "ok.txt"), "utf8")).toBe("fine");
  });

  it("answers what the kernel refuses with a coded 4xx, never a 500", async () => {
    const refused = { status: 403, body: { code: "PERMISSION_DENIED" } };
    expect(await files("write", { path: "/sys/planted.txt", content: "x" })).toMatchObject(refused);
    expect(await files("mkdir", { path: "/sys/planted" })).toMatchObject(refused);
    expect(await files("delete", { path: "/proc/version" })).toMatchObject(refused);
    expect(await files("rename", { oldPath: "/sys/kernel", newPath: "/sys/renamed" })).toMatchObject(refused);
    // A mount point cannot be moved (EBUSY).
    expect(await files("rename", { oldPath: "/proc", newPath: "/proc-moved" })).toMatchObject(refused);
  });
});

describe("paths the filesystem refuses", () => {
  it("answers a symlink loop with 400, not 500", async () => {
    symlinkSync("loop-b", ws("loop-a"));
    symlinkSync("loop-a", ws("loop-b"));
    const loop = { status: 400, body: { code: "INVALID_REQUEST", message: expect.stringContaining("symbolic links") } };
    expect(await files("read", { path: "loop-a" })).toMatchObject(loop);
    expect(await files("read", { path: "loop-a/below.txt" })).toMatchObject(loop);
    expect(await files("write", { path: "loop-a", content: "x" })).toMatchObject(loop);
    expect(await files("list", { path: "loop-a" })).toMatchObject(loop);
    expect(await files("exists", { path: "loop-a" })).toMatchObject(loop);
    expect(await files("mkdir", { path: "loop-a/sub", recursive: true })).toMatchObject(loop);
    expect(await files("move", { sourcePath: "here.txt", destinationPath: "loop-a" })).toMatchObject(loop);
    // The link itself is an entry like any other.
    expect((await files("delete", { path: "loop-b" })).status).toBe(200);
  });

  it("answers a name longer than the filesystem allows with 400, not 500", async () => {
    const long = "x".repeat(300);
    const tooLong = { status: 400, body: { code: "INVALID_REQUEST", message: expect.stringContaining("name too long") } };
    expect(await files("read", { path: long })).toMatchObject(tooLong);
    expect(await files("write", { path: long, content: "x" })).toMatchObject(tooLong);
    expect(await files("write", { path: `${long}/below.txt`, content: "x" })).toMatchObject(tooLong);
    expect(await files("list", { path: long })).toMatchObject(tooLong);
    expect(await files("exists", { path: long })).toMatchObject(tooLong);
    expect(await files("mkdir", { path: long, recursive: true })).toMatchObject(tooLong);
    expect(await files("delete", { path: long })).toMatchObject(tooLong);
    expect(await files("rename", { oldPath: "here.txt", newPath: long })).toMatchObject(tooLong);
  });
});

describe("moving to another filesystem", () => {
  // /dev/shm is a tmpfs of its own where it exists: a read-write path there is another filesystem.
  const shm = existsSync("/dev/shm") && statSync("/dev/shm").dev !== statSync(tmpdir()).dev ? "/dev/shm" : undefined;

  it.skipIf(!shm)("copies a tree with its modes and links, then removes the source", async () => {
    const elsewhere = mkdtempSync(join(shm!, "sandbox-xdev-"));
    const server = await startSandbox({ isolation: "none", readWritePaths: [elsewhere] });
    try {
      const at = (...parts: string[]) => join(server.workspace, ...parts);
      mkdirSync(at("tree/sub"), { recursive: true });
      writeFileSync(at("tree/run.sh"), "echo hi", { mode: 0o755 });
      writeFileSync(at("tree/sub/data.txt"), "data");
      symlinkSync("sub/data.txt", at("tree/link"));
      const moved = await server.post("/api/files/move", { sourcePath: "tree", destinationPath: elsewhere });
      expect(moved).toMatchObject({ status: 200, body: { destinationPath: join(elsewhere, "tree") } });
      expect(existsSync(at("tree"))).toBe(false);
      expect(readFileSync(join(elsewhere, "tree/sub/data.txt"), "utf8")).toBe("data");
      expect(statSync(join(elsewhere, "tree/run.sh")).mode & 0o777).toBe(0o755);
      expect(readlinkSync(join(elsewhere, "tree/link"))).toBe("sub/data.txt");
      expect(readdirSync(elsewhere)).toEqual(["tree"]);
      // Without overwrite an existing destination stays as it is.
      writeFileSync(at("again.txt"), "new");
      writeFileSync(join(elsewhere, "again.txt"), "old");
      expect(await server.post("/api/files/move", { sourcePath: "again.txt", destinationPath: join(elsewhere, "again.txt") })).toMatchObject({
        status: 409,
        body: { code: "FILE_EXISTS" },
      });
      expect((await server.post("/api/files/move", { sourcePath: "again.txt", destinationPath: join(elsewhere, "again.txt"), overwrite: true })).status).toBe(200);
      expect(readFileSync(join(elsewhere, "again.txt"), "utf8")).toBe("new");
    } finally {
      await server.close();
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
