/**
 * Explicit snapshots over Workers RPC and /v1: create, list, restore into the running sandbox,
 * delete; Cloudflare's options (a folder, excludes, gitignore; a restore into another folder, with
 * their handle); a folder churning while it is backed up; two sandboxes never see or reach each
 * other's snapshots (BACKUP_NOT_FOUND, 404); bad requests and a missing bucket get their codes.
 */
import { env, exports } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { getHttpSandbox } from "../../src/client/http.ts";
import { apiCall, sandboxPool, uniqueId } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(sandboxes.destroyAll);

describe("snapshots over RPC", () => {
  it("create, list, restore and delete", async () => {
    const sandbox = sandboxes.create("backup-rpc");
    await sandbox.exec("mkdir -p notes empty && echo first > notes/a.txt && ln -s notes/a.txt link && printf '\\x00\\x01\\xff' > bin");
    const backup = await sandbox.createBackup({ name: "before the change" });
    expect(backup).toMatchObject({ name: "before the change", paths: ["."] });
    expect(backup.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(backup.size).toBeGreaterThan(0);
    expect(Date.parse(backup.createdAt)).not.toBeNaN();
    expect(await sandbox.listBackups()).toEqual([backup]);

    await sandbox.exec("echo changed > notes/a.txt && echo new > notes/b.txt && rm -r empty link bin");
    const restored = await sandbox.restoreBackup(backup.id);
    expect(restored.backup).toEqual(backup);
    expect(restored.entries).toBeGreaterThanOrEqual(5);
    const check = await sandbox.exec("cat notes/a.txt; ls -A notes; readlink link; test -d empty && echo empty-dir; od -An -tx1 bin");
    expect(check.stdout).toBe("first\na.txt\nnotes/a.txt\nempty-dir\n 00 01 ff\n");

    const partial = await sandbox.createBackup({ paths: ["notes"] });
    expect(partial.paths).toEqual(["notes"]);
    expect((await sandbox.listBackups()).map((b) => b.id)).toEqual([backup.id, partial.id]);

    expect(await sandbox.deleteBackup(backup.id)).toEqual({ id: backup.id });
    expect((await sandbox.listBackups()).map((b) => b.id)).toEqual([partial.id]);
    await expect(sandbox.restoreBackup(backup.id)).rejects.toMatchObject({ code: "BACKUP_NOT_FOUND", httpStatus: 404 });
    await expect(sandbox.deleteBackup(backup.id)).rejects.toMatchObject({ code: "BACKUP_NOT_FOUND" });
    // The bucket holds it under this sandbox's own prefix.
    const listed = await env.SANDBOX_BACKUPS!.list({ prefix: `sandboxes/${sandbox.id}/backups/` });
    expect(listed.objects.map((o) => o.key)).toEqual([`sandboxes/${sandbox.id}/backups/${partial.id}.tar.gz`]);
  });

  it("a snapshot larger than several read ranges, the last one partial, restores byte for byte", async () => {
    const sandbox = sandboxes.create("backup-ranges");
    // Random bytes do not compress: the archive is about 19 MiB, read back in ranges of 8 MiB.
    await sandbox.exec("head -c 19500000 /dev/urandom > blob && sha256sum blob > sum", { timeout: 60_000 });
    const backup = await sandbox.createBackup();
    expect(backup.size).toBeGreaterThan(2 * 8 * 1024 * 1024);
    await sandbox.exec("head -c 1000 /dev/zero > blob");
    await sandbox.restoreBackup(backup.id);
    expect((await sandbox.exec("sha256sum -c sum && stat -c %s blob")).stdout).toBe("blob: OK\n19500000\n");
  });

  it("a restore replaces only the snapshot's paths", async () => {
    const sandbox = sandboxes.create("backup-paths");
    await sandbox.exec("mkdir notes && echo 1 > notes/a && echo keep > other.txt");
    const backup = await sandbox.createBackup({ paths: ["notes"] });
    await sandbox.exec("echo stale > notes/stale && echo changed > other.txt");
    await sandbox.restoreBackup(backup.id);
    expect((await sandbox.exec("ls notes; cat other.txt")).stdout).toBe("a\nchanged\n");
  });

  it("two sandboxes never see or reach each other's snapshots", async () => {
    const a = sandboxes.create("backup-a");
    const b = sandboxes.create("backup-b");
    await a.exec("echo secret of a > secret.txt");
    await b.exec("echo b > mine.txt");
    const ofA = await a.createBackup({ name: "a's" });
    expect(await b.listBackups()).toEqual([]);
    await expect(b.restoreBackup(ofA.id)).rejects.toMatchObject({ code: "BACKUP_NOT_FOUND", httpStatus: 404 });
    await expect(b.deleteBackup(ofA.id)).rejects.toMatchObject({ code: "BACKUP_NOT_FOUND", httpStatus: 404 });
    expect((await b.exec("ls")).stdout).toBe("mine.txt\n");
    // An id that tries to climb into a's prefix is not a backup id.
    await expect(b.restoreBackup(`../../${a.id}/backups/${ofA.id}`)).rejects.toMatchObject({ code: "INVALID_REQUEST", httpStatus: 400 });
    expect((await a.listBackups()).map((x) => x.id)).toEqual([ofA.id]);
  });

  it("refuses bad requests with their codes", async () => {
    const sandbox = sandboxes.create("backup-bad");
    await expect(sandbox.createBackup({ paths: ["../outside"] })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.createBackup({ paths: ["missing"] })).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
    await expect(sandbox.createBackup({ name: "" })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandboxes.create("backup-no-bucket", { persistence: { bucket: "NO_SUCH_BUCKET", onSleep: "none" } }).listBackups()).rejects.toMatchObject({
      code: "PERSISTENCE_NOT_CONFIGURED",
      httpStatus: 501,
    });
  });
});

describe("Cloudflare's backup options: dir, excludes, gitignore; restore into another dir", () => {
  // What `find` lists of a folder, less git's own files.
  const listing = "find . -path ./.git -prune -o -print | sort";

  it("backs up a folder less its excludes and what git ignores, and restores it into another, made when missing", async () => {
    const sandbox = sandboxes.create("backup-dir");
    // In a subshell: the default session stays in the workspace.
    await sandbox.exec(
      "(mkdir -p proj/src/node_modules proj/node_modules/p proj/build proj/empty && cd proj && git init -q && printf 'build/\\n' > .gitignore && " +
        "echo app > src/app.ts && echo log > src/debug.log && echo y > src/node_modules/y.js && echo x > node_modules/p/i.js && echo built > build/out.js && ln -s src/app.ts link)",
    );
    // Their localBucket, multipart and compression are taken, with no effect.
    const backup = await sandbox.createBackup({ dir: "proj", excludes: ["node_modules", "*.log"], gitignore: true, name: "proj", localBucket: true, multipart: false, compression: { format: "zstd" } });
    expect(backup).toMatchObject({ dir: "proj", paths: ["."], name: "proj" });
    const saved = ".\n./.gitignore\n./empty\n./link\n./src\n./src/app.ts\n";

    // Cloudflare's handle shape, into a folder that is not there yet.
    const restored = await sandbox.restoreBackup({ id: backup.id, dir: "elsewhere/copy", localBucket: true });
    expect(restored).toMatchObject({ id: backup.id, dir: "elsewhere/copy", backup });
    expect((await sandbox.exec(listing, { cwd: "elsewhere/copy" })).stdout).toBe(saved);
    expect((await sandbox.exec("cat elsewhere/copy/src/app.ts; readlink elsewhere/copy/link")).stdout).toBe("app\nsrc/app.ts\n");

    // Into a folder with other things in it: afterwards it holds exactly what was saved.
    await sandbox.exec("mkdir -p other && echo stale > other/stale && echo changed > proj/src/app.ts && rm proj/link");
    expect(await sandbox.restoreBackup(backup.id, { dir: "other" })).toMatchObject({ id: backup.id, dir: "other" });
    expect((await sandbox.exec(listing, { cwd: "other" })).stdout).toBe(saved);

    // The record createBackup returned goes back into the folder it was made of.
    await sandbox.restoreBackup(backup);
    expect((await sandbox.exec("cat src/app.ts; readlink link", { cwd: "proj" })).stdout).toBe("app\nsrc/app.ts\n");
    // What the backup left out is gone from there too: the folder holds exactly what was saved.
    expect((await sandbox.exec(listing, { cwd: "proj" })).stdout).toBe(saved);

    await expect(sandbox.createBackup({ dir: "no-such-folder" })).rejects.toMatchObject({ code: "FILE_NOT_FOUND" });
    await expect(sandbox.createBackup({ gitignore: "yes" } as never)).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.createBackup({ compression: { format: "brotli" } } as never)).rejects.toMatchObject({ code: "INVALID_REQUEST" });
    await expect(sandbox.restoreBackup(backup.id, { dri: "x" } as never)).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });

  it("over /v1 and the HTTP client", async () => {
    const sandbox = sandboxes.create("backup-dir-http");
    await sandbox.exec("mkdir -p app/cache && echo a > app/a.txt && echo c > app/cache/c");
    const created = await apiCall(`/v1/sandboxes/${sandbox.id}/backups`, { method: "POST", json: { dir: "app", excludes: ["cache"], gitignore: true } });
    expect(created.status).toBe(201);
    const { backup } = (await created.json()) as { backup: { id: string; dir: string } };
    expect(backup.dir).toBe("app");
    const restored = await apiCall(`/v1/sandboxes/${sandbox.id}/backups/${backup.id}/restore`, { method: "POST", json: { dir: "copy" } });
    expect(restored.status).toBe(200);
    expect(await restored.json()).toMatchObject({ id: backup.id, dir: "copy" });
    expect((await sandbox.exec("find copy | sort")).stdout).toBe("copy\ncopy/a.txt\n");
    const bad = await apiCall(`/v1/sandboxes/${sandbox.id}/backups/${backup.id}/restore`, { method: "POST", json: { into: "x" } });
    expect(bad.status).toBe(400);

    const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
    const options = { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: ((input, init) => worker.fetch(new Request(input, init))) as typeof fetch };
    const overHttp = getHttpSandbox(sandbox.id, options);
    expect(await overHttp.restoreBackup({ id: backup.id, dir: "copy2" })).toMatchObject({ id: backup.id, dir: "copy2" });
    expect((await sandbox.exec("cat copy2/a.txt; test -e copy2/cache || echo no-cache")).stdout).toBe("a\nno-cache\n");
  });

  it("a command churning files in the folder while it is backed up cannot bring the sandbox down", async () => {
    const sandbox = sandboxes.create("backup-churn");
    await sandbox.exec("mkdir churn");
    const churn = await sandbox.startProcess("cd churn && while :; do for i in $(seq 1 150); do mkdir -p d$i/e; echo x > d$i/e/f; echo y > f$i; done; rm -rf d* f*; done");
    for (let round = 0; round < 4; round++) {
      await sandbox.createBackup({ dir: "churn" }).then(
        (made) => expect(made.dir).toBe("churn"),
        (error: { code?: string }) => expect(["BACKUP_FAILED", "ARCHIVE_SOURCE_CHANGED"]).toContain(error.code),
      );
      await sandbox.exportArchive({ dir: "churn" }).then((stream) => new Response(stream).arrayBuffer()).catch(() => undefined);
    }
    await sandbox.killProcess(churn.id);
    expect((await sandbox.exec("echo alive")).stdout).toBe("alive\n");
  });
});

describe("snapshots over /v1", () => {
  it("create, list, restore, delete; another sandbox's id is 404 BACKUP_NOT_FOUND", async () => {
    const one = sandboxes.create("backup-http");
    const other = sandboxes.create("backup-http-other");
    await one.exec("echo v1 > file.txt");
    const created = await apiCall(`/v1/sandboxes/${one.id}/backups`, { method: "POST", json: { name: "v1" } });
    expect(created.status).toBe(201);
    const { backup } = (await created.json()) as { backup: { id: string; name: string } };
    expect(backup.name).toBe("v1");

    const list = (await (await apiCall(`/v1/sandboxes/${one.id}/backups`)).json()) as { backups: { id: string }[] };
    expect(list.backups.map((b) => b.id)).toEqual([backup.id]);

    await one.exec("echo v2 > file.txt");
    const restored = await apiCall(`/v1/sandboxes/${one.id}/backups/${backup.id}/restore`, { method: "POST" });
    expect(restored.status).toBe(200);
    expect((await one.exec("cat file.txt")).stdout).toBe("v1\n");

    const foreign = await apiCall(`/v1/sandboxes/${other.id}/backups/${backup.id}/restore`, { method: "POST" });
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ success: false, code: "BACKUP_NOT_FOUND" });
    expect((await (await apiCall(`/v1/sandboxes/${other.id}/backups`)).json()) as unknown).toEqual({ backups: [] });

    const bad = await apiCall(`/v1/sandboxes/${one.id}/backups`, { method: "POST", json: { paths: ["/etc"] } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "INVALID_REQUEST" });

    const deleted = await apiCall(`/v1/sandboxes/${one.id}/backups/${backup.id}`, { method: "DELETE" });
    expect(await deleted.json()).toEqual({ id: backup.id });
    expect((await apiCall(`/v1/sandboxes/${one.id}/backups/${backup.id}`, { method: "DELETE" })).status).toBe(404);
  });

  it("DELETE ?keep=true without persistence is 501 PERSISTENCE_NOT_CONFIGURED; a bad keep is 400", async () => {
    const sandbox = sandboxes.create("backup-http-keep");
    await sandbox.exec("true");
    const keep = await apiCall(`/v1/sandboxes/${sandbox.id}?keep=true`, { method: "DELETE" });
    expect(keep.status).toBe(501);
    expect(await keep.json()).toMatchObject({ code: "PERSISTENCE_NOT_CONFIGURED" });
    expect((await apiCall(`/v1/sandboxes/${sandbox.id}?keep=maybe`, { method: "DELETE" })).status).toBe(400);
  });

  it("PATCH /config takes persistence and refuses unknown fields in it", async () => {
    const sandbox = sandboxes.create("backup-http-config");
    const ok = await apiCall(`/v1/sandboxes/${sandbox.id}/config`, { method: "PATCH", json: { persistence: { paths: ["src"], onSleep: "none" } } });
    expect(ok.status).toBe(204);
    const info = (await (await apiCall(`/v1/sandboxes/${sandbox.id}/info`)).json()) as { persistence: unknown };
    expect(info.persistence).toMatchObject({ enabled: true, paths: ["src"], onSleep: "none", bucket: "SANDBOX_BACKUPS" });
    const bad = await apiCall(`/v1/sandboxes/${sandbox.id}/config`, { method: "PATCH", json: { persistence: { bukket: "X" } } });
    expect(bad.status).toBe(400);
  });
});

describe("workspace archives", () => {
  it("exportArchive and importArchive carry a workspace between sandboxes, over RPC and HTTP", async () => {
    const from = sandboxes.create("archive-from");
    const to = sandboxes.create("archive-to");
    await from.exec("mkdir -p a/b skip && echo one > a/b/f.txt && echo no > skip/x && ln -s a/b/f.txt link");
    const gz = await from.exportArchive({ exclude: ["skip"] });
    expect(await to.importArchive(gz)).toMatchObject({ entries: expect.any(Number) });
    expect((await to.exec("cat a/b/f.txt; readlink link; ls -A")).stdout).toBe("one\na/b/f.txt\na\nlink\n");

    const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
    const options = { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: ((input, init) => worker.fetch(new Request(input, init))) as typeof fetch };
    const overHttp = getHttpSandbox(to.id, options);
    const tar = await overHttp.exportArchive({ format: "tar", paths: ["a"] });
    const third = sandboxes.create("archive-third");
    await third.exec("true");
    await getHttpSandbox(third.id, options).importArchive(tar);
    expect((await third.exec("cat a/b/f.txt; ls -A")).stdout).toBe("one\na\n");
    await expect(third.importArchive(new Blob(["not an archive"]).stream())).rejects.toMatchObject({ code: "INVALID_ARCHIVE", httpStatus: 400 });
    await expect(third.exportArchive({ paths: ["../up"] })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });

  it("archives a folder anywhere in the sandbox (`dir`), over RPC and HTTP", async () => {
    // In a container of its own, so /tmp and /var/tmp are the sandbox's.
    const boxed = sandboxes.create("archive-dir", { isolation: "bwrap" });
    await boxed.exec("mkdir -p /tmp/src/d && echo t > /tmp/src/d/f.txt");
    expect(await boxed.importArchive(await boxed.exportArchive({ dir: "/tmp/src" }), { dir: "/var/tmp/copy" })).toMatchObject({ entries: expect.any(Number) });
    expect((await boxed.exec("cat /var/tmp/copy/d/f.txt")).stdout).toBe("t\n");
    const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
    const options = { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: ((input, init) => worker.fetch(new Request(input, init))) as typeof fetch };
    const overHttp = getHttpSandbox(boxed.id, options);
    await overHttp.importArchive(await overHttp.exportArchive({ dir: "/var/tmp/copy", format: "tar" }), { dir: "/tmp/over-http" });
    expect((await boxed.exec("cat /tmp/over-http/d/f.txt")).stdout).toBe("t\n");
    await expect(boxed.exportArchive({ dir: "/proc/self" })).rejects.toMatchObject({ code: "PERMISSION_DENIED", httpStatus: 403 });
    await expect(boxed.importArchive(await boxed.exportArchive({ dir: "/tmp/src" }), { dir: "/proc/self/fd" })).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
  });
});

describe("snapshots with getHttpSandbox", () => {
  it("the HTTP client offers the same calls, with the same codes", async () => {
    const worker = (exports as unknown as { default: { fetch(request: Request): Promise<Response> } }).default;
    const options = { url: "http://sandbox.test", token: env.SANDBOX_API_TOKEN!, fetch: ((input, init) => worker.fetch(new Request(input, init))) as typeof fetch };
    const sandbox = getHttpSandbox(uniqueId("backup-client"), options);
    const stranger = getHttpSandbox(uniqueId("backup-client-other"), options);
    try {
      await sandbox.exec("echo one > f.txt");
      const backup = await sandbox.createBackup({ name: "one" });
      expect(await sandbox.listBackups()).toEqual([backup]);
      await sandbox.exec("echo two > f.txt");
      expect((await sandbox.restoreBackup(backup.id)).backup.id).toBe(backup.id);
      expect((await sandbox.exec("cat f.txt")).stdout).toBe("one\n");
      await expect(stranger.restoreBackup(backup.id)).rejects.toMatchObject({ code: "BACKUP_NOT_FOUND", httpStatus: 404 });
      await expect(sandbox.destroy({ keep: true })).rejects.toMatchObject({ code: "PERSISTENCE_NOT_CONFIGURED" });
      expect(await sandbox.deleteBackup(backup.id)).toEqual({ id: backup.id });
      expect(await sandbox.listBackups()).toEqual([]);
    } finally {
      await Promise.all([sandbox.destroy(), stranger.destroy()]);
    }
  });
});
