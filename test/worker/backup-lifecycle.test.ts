/**
 * Snapshots with a lifecycle: labels and listings filtered by them (RPC and /v1), an expiry (`ttl`,
 * `expiresAt`) after which a snapshot is gone to callers and removed from the bucket by the alarm,
 * a per-sandbox quota (count and bytes) refused with BACKUP_QUOTA_EXCEEDED, and the totals getInfo
 * reports.
 */
import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { apiCall, eventually, sandboxPool } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(sandboxes.destroyAll);

describe("snapshot labels", () => {
  it("lists only the snapshots with every label asked for, over RPC and /v1", async () => {
    const sandbox = sandboxes.create("backup-labels");
    await sandbox.exec("echo data > f");
    const a = await sandbox.createBackup({ labels: { kind: "nightly", app: "x" } });
    const b = await sandbox.createBackup({ labels: { kind: "nightly", app: "y" } });
    const c = await sandbox.createBackup({ labels: { kind: "manual" } });
    const d = await sandbox.createBackup();
    expect(a.labels).toEqual({ kind: "nightly", app: "x" });
    const ids = async (label?: string | string[]) => (await sandbox.listBackups(label === undefined ? {} : { label })).map((backup) => backup.id);
    expect(await ids()).toEqual([a.id, b.id, c.id, d.id]);
    expect(await ids("kind=nightly")).toEqual([a.id, b.id]);
    expect(await ids("kind")).toEqual([a.id, b.id, c.id]);
    expect(await ids(["kind=nightly", "app=x"])).toEqual([a.id]);
    expect(await ids("kind=weekly")).toEqual([]);

    const response = await apiCall(`/v1/sandboxes/${sandbox.id}/backups?label=kind=nightly&label=app=y`);
    expect(((await response.json()) as { backups: { id: string }[] }).backups.map((backup) => backup.id)).toEqual([b.id]);
    await expect(sandbox.createBackup({ labels: { "bad name": "x" } })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });
});

describe("snapshot expiry", () => {
  it("an expired snapshot is gone at once, and the alarm removes it from the bucket", async () => {
    const sandbox = sandboxes.create("backup-ttl");
    await sandbox.exec("echo data > f");
    const short = await sandbox.createBackup({ ttl: 2 });
    const kept = await sandbox.createBackup({ expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(Date.parse(short.expiresAt!) - Date.parse(short.createdAt)).toBeGreaterThanOrEqual(1_900);
    expect((await sandbox.listBackups()).map((backup) => backup.id)).toEqual([short.id, kept.id]);

    const key = `sandboxes/${sandbox.id}/backups/${short.id}.tar.gz`;
    expect(await env.SANDBOX_BACKUPS!.head(key)).not.toBeNull();
    expect(await eventually(async () => (await sandbox.listBackups()).length === 1, 10_000, 200)).toBe(true);
    // Past its expiry: BACKUP_EXPIRED until the alarm removed it from the bucket, then BACKUP_NOT_FOUND.
    await expect(sandbox.restoreBackup(short.id)).rejects.toMatchObject({ code: expect.stringMatching(/^BACKUP_(EXPIRED|NOT_FOUND)$/) });
    // Removed from the bucket by the alarm, with nobody calling.
    expect(await eventually(async () => (await env.SANDBOX_BACKUPS!.head(key)) === null, 20_000, 250)).toBe(true);
    expect(await env.SANDBOX_BACKUPS!.head(`sandboxes/${sandbox.id}/backups/${kept.id}.tar.gz`)).not.toBeNull();
    await expect(sandbox.createBackup({ ttl: 5, expiresAt: new Date().toISOString() })).rejects.toMatchObject({ code: "INVALID_REQUEST" });
  });
});

describe("snapshot quota", () => {
  it("refuses a snapshot past the count or the bytes, keeps nothing of it, and getInfo says what they hold", async () => {
    const sandbox = sandboxes.create("backup-quota");
    await sandbox.exec("head -c 200000 /dev/urandom > blob");
    await sandbox.configure({ backupQuota: { maxCount: 2 } });
    const first = await sandbox.createBackup();
    await sandbox.createBackup();
    await expect(sandbox.createBackup()).rejects.toMatchObject({ code: "BACKUP_QUOTA_EXCEEDED", httpStatus: 507 });
    expect(await sandbox.listBackups()).toHaveLength(2);

    await sandbox.configure({ backupQuota: { maxBytes: first.size * 2 + 1000 } });
    await sandbox.exec("head -c 200000 /dev/urandom > blob2");
    await expect(sandbox.createBackup()).rejects.toMatchObject({ code: "BACKUP_QUOTA_EXCEEDED" });
    expect(await sandbox.listBackups()).toHaveLength(2);

    const { persistence } = await sandbox.getInfo();
    const sizes = (await sandbox.listBackups()).reduce((sum, backup) => sum + backup.size, 0);
    expect(persistence.backups).toEqual({ count: 2, totalBytes: sizes, quota: { maxBytes: first.size * 2 + 1000 } });
  });
});
