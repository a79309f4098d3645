/**
 * Backups through Cloudflare's own Sandbox SDK client (`@cloudflare/sandbox`, its BackupClient as
 * their Durable Object calls it) against our container server: an archive of a folder written to a
 * file, restored from it, and sent in byte ranges to presigned part URLs. A small HTTP server here
 * stands in for R2's part URLs: it keeps the bytes of each PUT and answers an ETag, as R2 does.
 */
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "@cloudflare/sandbox";
import { cloudflareClient, NO_SESSION } from "./cloudflare-client.ts";
import { call, startTestServer, type TestServer } from "./helpers.ts";

let t: TestServer;
let client: SandboxClient;

beforeAll(async () => {
  t = await startTestServer();
  client = cloudflareClient(t.url);
  mkdirSync(join(t.workspace, "backups"));
});
afterAll(() => t.close());

async function failure(call: Promise<unknown>): Promise<{ code?: string; httpStatus?: number; name?: string; message?: string }> {
  try {
    await call;
  } catch (error) {
    return error as never;
  }
  throw new Error("expected the call to fail");
}

/** Every entry below `root`: its kind, permission bits, and content or link target. */
function tree(root: string, relative = ""): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of readdirSync(join(root, relative)).sort()) {
    const path = join(relative, name);
    const stats = lstatSync(join(root, path));
    if (stats.isSymbolicLink()) found[path] = `link -> ${readlinkSync(join(root, path))}`;
    else if (stats.isDirectory()) {
      found[path] = `dir ${(stats.mode & 0o777).toString(8)}`;
      Object.assign(found, tree(root, path));
    } else found[path] = `file ${(stats.mode & 0o777).toString(8)} ${readFileSync(join(root, path)).toString("base64")}`;
  }
  return found;
}

/** A folder with text, binary, links (inside and outside), an executable and an empty folder. */
function makeProject(dir: string): void {
  mkdirSync(join(dir, "src/deep"), { recursive: true });
  mkdirSync(join(dir, "empty"));
  writeFileSync(join(dir, "README.md"), "héllo backups\n");
  writeFileSync(join(dir, "src/deep/data.bin"), Buffer.from([0, 1, 2, 253, 254, 255]));
  writeFileSync(join(dir, "run.sh"), "#!/bin/sh\necho run\n");
  chmodSync(join(dir, "run.sh"), 0o755);
  symlinkSync("src/deep/data.bin", join(dir, "data-link"));
  symlinkSync("/usr/bin/env", join(dir, "env-link"));
}

describe("createArchive and restoreArchive", () => {
  it("archives a folder to a file, and restores it exactly after it was deleted", async () => {
    const project = join(t.workspace, "project");
    const archive = join(t.workspace, "backups", "one.sqsh");
    makeProject(project);
    const before = tree(project);

    const created = await client.backup.createArchive(project, archive, NO_SESSION);
    expect(created).toMatchObject({ success: true, archivePath: archive, sizeBytes: statSync(archive).size });
    expect(created.sizeBytes).toBeGreaterThan(0);

    rmSync(project, { recursive: true });
    expect(await client.backup.restoreArchive(project, archive, NO_SESSION)).toMatchObject({ success: true, dir: project });
    expect(tree(project)).toEqual(before);
    expect(execFileSync(join(project, "run.sh"), { encoding: "utf8" })).toBe("run\n");
  });

  it("leaves the folder holding exactly what was saved, and restores into another folder", async () => {
    const project = join(t.workspace, "kept");
    const archive = join(t.workspace, "backups", "kept.sqsh");
    makeProject(project);
    const before = tree(project);
    await client.backup.createArchive(project, archive, NO_SESSION);

    writeFileSync(join(project, "README.md"), "changed\n");
    writeFileSync(join(project, "added-later.txt"), "not in the backup\n");
    rmSync(join(project, "empty"), { recursive: true });
    await client.backup.restoreArchive(project, archive, NO_SESSION);
    expect(tree(project)).toEqual(before);

    const elsewhere = join(t.workspace, "elsewhere", "copy");
    await client.backup.restoreArchive(elsewhere, archive, NO_SESSION);
    expect(tree(elsewhere)).toEqual(before);
  });

  it("leaves out what excludes name (a name at any depth, or a path) and what git ignores", async () => {
    const project = join(t.workspace, "ignoring");
    const archive = join(t.workspace, "backups", "ignoring.sqsh");
    mkdirSync(join(project, "node_modules/pkg"), { recursive: true });
    mkdirSync(join(project, "src/node_modules"), { recursive: true });
    mkdirSync(join(project, "build"), { recursive: true });
    mkdirSync(join(project, "cache/tmp"), { recursive: true });
    writeFileSync(join(project, "node_modules/pkg/index.js"), "x");
    writeFileSync(join(project, "src/node_modules/y.js"), "y");
    writeFileSync(join(project, "src/app.ts"), "app");
    writeFileSync(join(project, "src/debug.log"), "log");
    writeFileSync(join(project, "cache/tmp/t"), "t");
    writeFileSync(join(project, "cache/keep"), "k");
    writeFileSync(join(project, "build/out.js"), "built");
    writeFileSync(join(project, ".gitignore"), "build/\n");
    execFileSync("git", ["init", "-q", project]);

    await client.backup.createArchive(project, archive, NO_SESSION, { excludes: ["node_modules", "*.log", "cache/tmp"], gitignore: true });
    const restored = join(t.workspace, "ignoring-restored");
    await client.backup.restoreArchive(restored, archive, NO_SESSION);
    const names = Object.keys(tree(restored)).filter((path) => !path.startsWith(".git/"));
    expect(names.sort()).toEqual([".git", ".gitignore", "cache", "cache/keep", "src", "src/app.ts"]);

    await client.backup.createArchive(project, archive, NO_SESSION, { excludes: ["*.log"] });
    await client.backup.restoreArchive(restored, archive, NO_SESSION);
    expect(existsSync(join(restored, "build/out.js"))).toBe(true);
  });

  it("takes folders and archives anywhere but the server's own process; refuses a missing archive, a file that is not one, and an archive inside its folder", async () => {
    const project = join(t.workspace, "project");
    const elsewhere = mkdtempSync(join(tmpdir(), "sandbox-backup-elsewhere-"));
    try {
      expect(await client.backup.createArchive(project, join(elsewhere, "x.sqsh"), NO_SESSION)).toMatchObject({ sizeBytes: expect.any(Number) });
      await client.backup.restoreArchive(join(elsewhere, "restored"), join(elsewhere, "x.sqsh"), NO_SESSION);
      expect(tree(join(elsewhere, "restored"))).toEqual(tree(project));
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    expect(await failure(client.backup.createArchive(project, "/proc/self/x.sqsh", NO_SESSION))).toMatchObject({ code: "PERMISSION_DENIED", httpStatus: 403 });
    expect(await failure(client.backup.createArchive("/proc/self", join(t.workspace, "backups", "server.sqsh"), NO_SESSION))).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(await failure(client.backup.restoreArchive("/proc/self/fd", join(t.workspace, "backups", "one.sqsh"), NO_SESSION))).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(await failure(client.backup.createArchive(join(t.workspace, "nothing"), join(t.workspace, "backups", "n.sqsh"), NO_SESSION))).toMatchObject({ code: "FILE_NOT_FOUND" });
    expect(await failure(client.backup.createArchive(project, join(project, "self.sqsh"), NO_SESSION))).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 400 });

    const target = join(t.workspace, "untouched");
    mkdirSync(target);
    writeFileSync(join(target, "keep.txt"), "keep");
    expect(await failure(client.backup.restoreArchive(target, join(t.workspace, "backups", "missing.sqsh"), NO_SESSION))).toMatchObject({ code: "FILE_NOT_FOUND" });
    expect(readFileSync(join(target, "keep.txt"), "utf8")).toBe("keep");
    writeFileSync(join(t.workspace, "backups", "not-an-archive.sqsh"), "hsqs: not a tar at all");
    expect(await failure(client.backup.restoreArchive(target, join(t.workspace, "backups", "not-an-archive.sqsh"), NO_SESSION))).toMatchObject({
      name: "BackupRestoreError",
      code: "BACKUP_RESTORE_FAILED",
      httpStatus: 400,
    });
  });
});

describe("a folder changing while it is packed", () => {
  it("a command creating and deleting files in a loop cannot crash the server: each archive is whole or fails with a code", async () => {
    const folder = join(t.workspace, "churning");
    mkdirSync(folder);
    // Entries appear and vanish between node-tar's listing of a folder and its reading of them.
    const churn = spawn("bash", ["-c", "while :; do for i in $(seq 1 150); do mkdir -p d$i/e; echo x > d$i/e/f; echo y > f$i; done; rm -rf d* f*; done"], {
      cwd: folder,
      stdio: "ignore",
    });
    try {
      for (let round = 0; round < 12; round++) {
        const archive = join(t.workspace, "backups", `churning-${round}.sqsh`);
        const made = await client.backup.createArchive(folder, archive, NO_SESSION).then(
          () => "whole",
          (error: { code?: string; httpStatus?: number }) => `${error.code} ${error.httpStatus}`,
        );
        expect(["whole", "BACKUP_CREATE_FAILED 409"]).toContain(made);
        // Our own archive route: a whole archive, or one cut short (never a whole-looking one lacking entries).
        const response = await fetch(`${t.url}/api/archive/create`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ dir: folder }) });
        expect(response.status).toBe(200);
        await response.arrayBuffer().catch(() => undefined);
      }
    } finally {
      churn.kill("SIGKILL");
    }
    expect((await call(t.url, "GET", "/api/ping")).status).toBe(200);
    expect(await client.backup.createArchive(join(t.workspace, "project"), join(t.workspace, "backups", "after.sqsh"), NO_SESSION)).toMatchObject({ sizeBytes: expect.any(Number) });
  });
});

/** Stands in for R2's presigned part URLs: keeps each part's bytes and answers its ETag. */
interface PartStore {
  url: string;
  parts: Map<number, Buffer>;
  methods: string[];
  failPart?: number;
  server: Server;
}

async function startPartStore(): Promise<PartStore> {
  const store = { parts: new Map<number, Buffer>(), methods: [] as string[] } as PartStore;
  store.server = createServer(async (req, res) => {
    const partNumber = Number(new URL(req.url!, "http://x").searchParams.get("partNumber"));
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    store.methods.push(req.method!);
    if (partNumber === store.failPart) {
      res.writeHead(403, { "content-type": "application/xml" }).end("<Error><Code>AccessDenied</Code></Error>");
      return;
    }
    store.parts.set(partNumber, Buffer.concat(chunks));
    res.writeHead(200, { etag: `"etag-${partNumber}"` }).end();
  });
  await new Promise<void>((resolve) => store.server.listen(0, "127.0.0.1", resolve));
  store.url = `http://127.0.0.1:${(store.server.address() as AddressInfo).port}`;
  return store;
}

/** The parts as their Durable Object computes them: equal sizes, the last one takes the rest. */
function partsOf(store: PartStore, size: number, count: number) {
  const partSize = Math.ceil(size / count);
  return Array.from({ length: count }, (_, i) => ({
    partNumber: i + 1,
    url: `${store.url}/backups/id/data.sqsh?partNumber=${i + 1}&uploadId=up-1&X-Amz-Signature=abc`,
    offset: i * partSize,
    size: i === count - 1 ? size - i * partSize : partSize,
  }));
}

describe("uploadParts", () => {
  let store: PartStore;
  beforeAll(async () => {
    store = await startPartStore();
  });
  afterAll(async () => {
    store.server.closeAllConnections();
    await new Promise<void>((resolve) => store.server.close(() => resolve()));
  });

  it("PUTs each byte range of the archive to its URL and answers every part's ETag", async () => {
    const project = join(t.workspace, "large");
    mkdirSync(project);
    // Bytes that do not compress, so the archive is large enough for several parts.
    for (let i = 0; i < 4; i++) writeFileSync(join(project, `blob-${i}.bin`), Buffer.from(Array.from({ length: 200_000 }, (_, j) => (j * 7919 + i * 31 + ((j * j) >> 3)) & 255)));
    const archive = join(t.workspace, "backups", "large.sqsh");
    const { sizeBytes } = await client.backup.createArchive(project, archive, NO_SESSION);
    expect(sizeBytes).toBe(statSync(archive).size);

    const parts = partsOf(store, sizeBytes, 6);
    const uploaded = await client.backup.uploadParts({ archivePath: archive, parts }, NO_SESSION);
    expect(uploaded).toMatchObject({ success: true });
    expect(uploaded.parts).toEqual(parts.map((part) => ({ partNumber: part.partNumber, etag: `"etag-${part.partNumber}"` })));
    expect(store.methods.every((method) => method === "PUT")).toBe(true);
    for (const part of parts) expect(store.parts.get(part.partNumber)!.length).toBe(part.size);
    const reassembled = Buffer.concat(parts.map((part) => store.parts.get(part.partNumber)!));
    expect(reassembled.equals(readFileSync(archive))).toBe(true);

    // What was sent restores to what was saved.
    const copy = join(t.workspace, "backups", "reassembled.sqsh");
    writeFileSync(copy, reassembled);
    const before = tree(project);
    await client.backup.restoreArchive(join(t.workspace, "large-restored"), copy, NO_SESSION);
    expect(tree(join(t.workspace, "large-restored"))).toEqual(before);
  });

  it("fails with their BACKUP_CREATE_FAILED when a part URL refuses, and refuses ranges past the end", async () => {
    const archive = join(t.workspace, "backups", "large.sqsh");
    const size = statSync(archive).size;
    store.failPart = 2;
    const refused = await failure(client.backup.uploadParts({ archivePath: archive, parts: partsOf(store, size, 3) }, NO_SESSION));
    expect(refused).toMatchObject({ name: "BackupCreateError", code: "BACKUP_CREATE_FAILED", httpStatus: 502 });
    expect(refused.message).toContain("part 2");
    store.failPart = undefined;

    const past = partsOf(store, size + 10, 2);
    expect(await failure(client.backup.uploadParts({ archivePath: archive, parts: past }, NO_SESSION))).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 400 });
    const elsewhere = [{ partNumber: 1, url: "file:///etc/passwd", offset: 0, size: 1 }];
    expect(await failure(client.backup.uploadParts({ archivePath: archive, parts: elsewhere }, NO_SESSION))).toMatchObject({ code: "VALIDATION_FAILED" });
    expect(await failure(client.backup.uploadParts({ archivePath: "/proc/self/environ", parts: partsOf(store, 10, 1) }, NO_SESSION))).toMatchObject({ code: "PERMISSION_DENIED" });
  });
});
