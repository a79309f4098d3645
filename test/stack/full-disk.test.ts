/**
 * A sandbox that fills its disk, through the whole chain: a stack of its own with its sandboxes and
 * the Worker's state on a small ext4 file system (loop-mounted; root only), each sandbox's own disk
 * 64 MiB (SANDBOX_DISK_MAX). A command writes zeros until its disk refuses; then the filler's next
 * write is 507 INSUFFICIENT_STORAGE, while another sandbox runs commands, its Durable Object goes on
 * writing its storage (a config, an egress secret) and a snapshot of 3 MiB lands in the local bucket.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_METHODS } from "../../src/rpc/bindings/index.ts";
import { startOwnStack, type OwnStack } from "./own-stack.ts";

const canMount = process.getuid?.() === 0 && spawnSync("mkfs.ext4", ["-V"], { stdio: "ignore" }).status === 0;

let folder: string;
let mountPoint: string;
let stack: OwnStack;

beforeAll(async () => {
  if (!canMount) return;
  folder = mkdtempSync(join(tmpdir(), "sandbox-full-disk-"));
  // Sandboxes run as other host users: they pass through it to their own folders.
  chmodSync(folder, 0o711);
  const image = join(folder, "disk.img");
  mountPoint = join(folder, "disk");
  mkdirSync(mountPoint);
  execFileSync("truncate", ["-s", "192M", image]);
  execFileSync("mkfs.ext4", ["-q", "-m", "5", image]);
  execFileSync("mount", ["-o", "loop", image, mountPoint]);
  stack = await startOwnStack("full-disk", { dataDir: mountPoint, env: { SANDBOX_DISK_MAX: "64M" } });
}, 180_000);

afterAll(async () => {
  if (!canMount) return;
  await stack?.stop();
  // Lazily: a sandbox's disk on it may outlive the stack's stop by a moment; the loop device goes with its last user.
  spawnSync("umount", ["--lazy", mountPoint]);
  rmSync(folder, { recursive: true, force: true });
}, 60_000);

async function call(path: string, method: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}/v1/sandboxes${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

describe.skipIf(!canMount)("a disk filled by one sandbox", () => {
  it("answers the filler 507 and keeps the others answering, their Durable Objects' storage included", { timeout: 120_000 }, async () => {
    // Workspace content whose snapshot, taken once the disk is full, needs new blocks of the state's.
    expect((await call("/other/exec", "POST", { command: "head -c 3M /dev/urandom > data.bin && echo before" })).body).toMatchObject({ stdout: "before\n" });

    const filled = await call("/filler/exec", "POST", { command: "dd if=/dev/zero of=/workspace/zeros bs=1M; df -k /workspace | tail -1", timeout: 120_000 });
    expect(filled.status).toBe(200);
    expect(filled.body.stderr).toMatch(/No space left on device/);
    const upload = await call("/filler/files/write", "POST", { path: "more.txt", content: "x".repeat(4 * 1024 * 1024) });
    expect(upload).toMatchObject({ status: 507, body: { code: "INSUFFICIENT_STORAGE" } });

    expect((await call("/other/exec", "POST", { command: "echo after" })).body).toMatchObject({ stdout: "after\n" });
    expect((await call("/other/config", "PATCH", { envVars: { AFTER: "1" } })).status).toBeLessThan(300);
    expect((await call("/other/network/secrets/AFTER_TOKEN", "PUT", { value: "kept" })).status).toBe(200);
    expect((await call("/other/exec", "POST", { command: "echo $AFTER" })).body).toMatchObject({ stdout: "1\n" });
    const snapshot = await call("/other/backups", "POST", {});
    expect({ status: snapshot.status, code: snapshot.body?.code }).toMatchObject({ status: API_METHODS.createBackup.status });
    // The filler answers too, and says the same of its next write.
    expect((await call("/filler/exec", "POST", { command: "echo still" })).body).toMatchObject({ stdout: "still\n" });
  });
});
