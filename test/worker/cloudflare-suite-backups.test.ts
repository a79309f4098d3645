/**
 * Cloudflare's backup cases (their backup workflow) on our R2 bucket, ported to getSandbox and called
 * as their SDK declares the calls: createBackup({ dir, ttl?, gitignore? }) → { id, dir }, and
 * restoreBackup({ id, dir }). A folder saved and restored, gitignored files kept unless asked,
 * nested trees, empty folders, another folder as the target, writes after a restore, expired and
 * unknown ids, and relative or escaping paths refused.
 */
import { afterAll, describe, expect, it } from "vitest";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

interface DirectoryBackup {
  id: string;
  dir: string;
}

/** Cloudflare's backup calls, typed as their SDK declares them. */
interface CloudflareBackups {
  createBackup(options: { dir: string; name?: string; ttl?: number; gitignore?: boolean; excludes?: string[] }): Promise<DirectoryBackup>;
  restoreBackup(backup: DirectoryBackup): Promise<{ success: boolean; dir: string; id: string }>;
}

describe("backup workflow", () => {
  const sandbox = sandboxes.create("cf-backups");
  const backups = sandbox as unknown as CloudflareBackups;
  const run = async (command: string) => (await sandbox.exec(command)).stdout.trim();

  it("backs up and restores a directory", async () => {
    await run("mkdir -p /workspace/backup-basic && echo 'backup test content' > /workspace/backup-basic/data.txt");
    const backup = await backups.createBackup({ dir: "/workspace/backup-basic", name: "basic" });
    expect(backup.id).toBeDefined();
    expect(backup.dir).toBe("/workspace/backup-basic");
    expect(await run("rm -rf /workspace/backup-basic && test ! -e /workspace/backup-basic && echo deleted")).toBe("deleted");
    expect((await backups.restoreBackup(backup)).success).toBe(true);
    expect(await run("cat /workspace/backup-basic/data.txt")).toBe("backup test content");
  });

  it("keeps gitignored files by default, and with gitignore: false", async () => {
    await run(
      "mkdir -p /workspace/backup-git/app/node_modules /workspace/backup-git/app/dist && cd /workspace/backup-git && git init -q && printf 'app/node_modules/\\napp/dist/\\n' > .gitignore && echo yes > app/keep.txt && echo no > app/node_modules/excluded.txt && echo yes > app/dist/out.js",
    );
    for (const options of [{}, { gitignore: false }]) {
      const backup = await backups.createBackup({ dir: "/workspace/backup-git/app", ...options });
      await run("rm -rf /workspace/backup-git/app && mkdir -p /workspace/backup-git/app");
      await backups.restoreBackup(backup);
      const seen = await run("cd /workspace/backup-git/app && echo keep:$(cat keep.txt) excluded:$(cat node_modules/excluded.txt) dist:$(test -f dist/out.js && echo yes)");
      expect(seen).toBe("keep:yes excluded:no dist:yes");
    }
  });

  it("leaves out what git ignores with gitignore: true, by the rules that apply inside the folder", async () => {
    await run(
      "mkdir -p /workspace/backup-nested/app/dist && cd /workspace/backup-nested && git init -q && printf '*.log\\n' > .gitignore && printf 'dist/\\n' > app/.gitignore && echo yes > app/keep.txt && echo x > app/dist/out.js && echo x > app/debug.log",
    );
    const backup = await backups.createBackup({ dir: "/workspace/backup-nested/app", gitignore: true });
    await run("rm -rf /workspace/backup-nested/app && mkdir -p /workspace/backup-nested/app");
    await backups.restoreBackup(backup);
    const seen = await run("cd /workspace/backup-nested/app && echo keep:$(cat keep.txt) dist:$(test -e dist && echo yes || echo no) log:$(test -e debug.log && echo yes || echo no)");
    expect(seen).toBe("keep:yes dist:no log:no");
  });

  it("restores a nested tree and an empty directory", async () => {
    await run("mkdir -p /workspace/backup-tree/a/b/c /workspace/backup-empty && echo deep > /workspace/backup-tree/a/b/c/deep.txt && echo top > /workspace/backup-tree/top.txt");
    const tree = await backups.createBackup({ dir: "/workspace/backup-tree" });
    const empty = await backups.createBackup({ dir: "/workspace/backup-empty" });
    await run("rm -rf /workspace/backup-tree /workspace/backup-empty");
    await backups.restoreBackup(tree);
    await backups.restoreBackup(empty);
    expect(await run("cat /workspace/backup-tree/a/b/c/deep.txt /workspace/backup-tree/top.txt")).toBe("deep\ntop");
    expect(await run("test -d /workspace/backup-empty && ls -A /workspace/backup-empty | wc -l")).toBe("0");
  });

  it("restores into another directory, and later writes leave the backup as it was", async () => {
    await run("mkdir -p /workspace/backup-source && echo original > /workspace/backup-source/file.txt");
    const backup = await backups.createBackup({ dir: "/workspace/backup-source" });
    await backups.restoreBackup({ id: backup.id, dir: "/workspace/backup-elsewhere" });
    expect(await run("cat /workspace/backup-elsewhere/file.txt")).toBe("original");
    await run("echo changed > /workspace/backup-elsewhere/file.txt");
    await backups.restoreBackup({ id: backup.id, dir: "/workspace/backup-again" });
    expect(await run("cat /workspace/backup-again/file.txt")).toBe("original");
  });

  it("keeps filenames with spaces and unicode", async () => {
    await run("mkdir -p '/workspace/backup-names/sub dir' && echo spaced > '/workspace/backup-names/sub dir/file name.txt' && echo unicode > /workspace/backup-names/日本語.txt");
    const backup = await backups.createBackup({ dir: "/workspace/backup-names" });
    await run("rm -rf /workspace/backup-names");
    await backups.restoreBackup(backup);
    expect(await run("cat '/workspace/backup-names/sub dir/file name.txt' /workspace/backup-names/日本語.txt")).toBe("spaced\nunicode");
  });

  // Past its ttl a backup is BACKUP_EXPIRED (400) until the Durable Object's alarm removes it from the
  // bucket, which it does at the expiry; then it is BACKUP_NOT_FOUND (404), which theirs never says.
  it("refuses an expired backup (BACKUP_EXPIRED, or BACKUP_NOT_FOUND once removed)", async () => {
    await run("mkdir -p /workspace/backup-expiring && echo x > /workspace/backup-expiring/x");
    const backup = await backups.createBackup({ dir: "/workspace/backup-expiring", ttl: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const { code, httpStatus } = (await backups.restoreBackup(backup).catch((error: unknown) => error)) as { code?: string; httpStatus?: number };
    expect(`${code} ${httpStatus}`).toMatch(/^(BACKUP_EXPIRED 400|BACKUP_NOT_FOUND 404)$/);
  });

  it("refuses an unknown id (BACKUP_NOT_FOUND) and a malformed one (400)", async () => {
    await expect(backups.restoreBackup({ id: "00000000-0000-4000-8000-000000000000", dir: "/workspace/test" })).rejects.toMatchObject({ code: "BACKUP_NOT_FOUND", httpStatus: 404 });
    await expect(backups.restoreBackup({ id: "not-a-valid-uuid", dir: "/workspace/test" })).rejects.toMatchObject({ httpStatus: 400 });
  });

  // Theirs refuses a relative dir; ours resolves it against /workspace, as every path of ours
  // (docs/cloudflare-compatibility.md), so only a folder that is not there, or not a folder, is refused.
  it("refuses a folder that is not there, relative or climbing", async () => {
    await expect(backups.createBackup({ dir: "relative/path" })).rejects.toMatchObject({ code: "FILE_NOT_FOUND", httpStatus: 404 });
    await expect(backups.createBackup({ dir: "/workspace/../../../etc/passwd" })).rejects.toMatchObject({ code: "NOT_A_DIRECTORY", httpStatus: 409 });
  });

  it("makes concurrent backups that each restore what they saved", async () => {
    await run("for i in 1 2 3; do mkdir -p /workspace/backup-concurrent-$i && echo content-$i > /workspace/backup-concurrent-$i/f.txt; done");
    const made = await Promise.all([1, 2, 3].map((i) => backups.createBackup({ dir: `/workspace/backup-concurrent-${i}` })));
    expect(new Set(made.map((b) => b.id)).size).toBe(3);
    await run("rm -rf /workspace/backup-concurrent-*");
    for (const backup of made) await backups.restoreBackup(backup);
    expect(await run("cat /workspace/backup-concurrent-1/f.txt /workspace/backup-concurrent-2/f.txt /workspace/backup-concurrent-3/f.txt")).toBe("content-1\ncontent-2\ncontent-3");
  });
});
