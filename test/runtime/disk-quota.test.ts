/**
 * One sandbox cannot fill the disk the service and the other sandboxes write on: each container
 * writes on a disk of its own (runtime/container/disk.ts), here 32 MiB, inside a data folder on a
 * small loop-mounted ext4 that keeps nothing for root (`-m 0`, as tmpfs, XFS and btrfs keep nothing),
 * where a full disk used to stop everyone. A sandbox attacks its limit every way a command can write
 * (dd, many small files, fallocate, a sparse file made dense, /tmp, the workspace, a hard link and a
 * rename across its folders) and meets ENOSPC each time, and 507 on the files API; another sandbox
 * and the service's own writes on the same disk go on, and what it deletes goes back to the host. What a sandbox wrote persists across its
 * container's restarts, as it did before (a workspace from before disks included); a new sandbox on a
 * full host disk is 507, not a start failure, and a disk a crashed runtime left mounted comes off
 * before the next one starts. Many sandboxes together, with disks small or larger than the host's
 * free space, written at once as fast as they can, never take the room kept for the service: each
 * is refused by its own disk (ENOSPC), never with the I/O errors of a host full under its image.
 * Root only (mounting).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FILE_ROUTES } from "../../protocol/files.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import { containerSettings } from "../../runtime/container/settings.ts";
import { DEFAULT_SANDBOX_LIMITS, limitsFromEnv } from "../../runtime/container/limits.ts";
import { isMountPoint, SandboxDisks } from "../../runtime/container/disk.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall, eventually } from "./helpers.ts";

const MIB = 1024 ** 2;
const DISK_BYTES = 32 * MIB;
const canMount = process.getuid?.() === 0 && spawnSync("mkfs.ext4", ["-V"], { stdio: "ignore" }).status === 0 && detectIsolation().bwrap.available;

let folder: string;
/** The host's disk, as the service sees it: the sandboxes' data folder and the service's own state on it. */
let hostDisk: string;
let dataDir: string;
let pool: ContainerPool;

beforeAll(() => {
  if (!canMount) return;
  folder = mkdtempSync(join(tmpdir(), "sandbox-disk-quota-"));
  execFileSync("chmod", ["0711", folder]);
  const image = join(folder, "host.img");
  hostDisk = join(folder, "host");
  mkdirSync(hostDisk);
  execFileSync("truncate", ["-s", "192M", image]);
  execFileSync("mkfs.ext4", ["-q", "-m", "0", image]);
  execFileSync("mount", ["-o", "loop", image, hostDisk]);
  execFileSync("chmod", ["0711", hostDisk]);
  dataDir = join(hostDisk, "sandboxes");
  pool = newPool(0);
}, 60_000);

afterAll(async () => {
  if (!canMount) return;
  await pool?.stopAll();
  spawnSync("umount", ["--lazy", hostDisk]);
  rmSync(folder, { recursive: true, force: true });
}, 60_000);

function newPool(warmServers: number): ContainerPool {
  return new ContainerPool({
    dataDir,
    launcher: directLauncher,
    isolation: { mode: "bwrap", env: {} },
    stopGraceMs: 1_000,
    warmServers,
    containers: containerSettings({ dataDir, limits: { ...DEFAULT_SANDBOX_LIMITS, diskBytes: DISK_BYTES } }),
  });
}

const exec = async (container: ContainerProcess, command: string) =>
  (await containerCall(container, "POST", "/api/execute", { command, timeout: 60_000 })).body as { exitCode: number; stdout: string; stderr: string };

/** Bytes the sandbox may still write, as its own `df` says. */
const freeInside = async (container: ContainerProcess) => Number((await exec(container, "df -k --output=avail /workspace | tail -1")).stdout.trim()) * 1024;

const hostFree = () => {
  const stats = statfsSync(hostDisk);
  return Number(stats.bavail) * Number(stats.bsize);
};

describe("SANDBOX_DISK_MAX", () => {
  it("is read from the environment, 4 GiB by default, with a clear refusal", () => {
    expect(limitsFromEnv({}).diskBytes).toBe(4 * 1024 ** 3);
    expect(limitsFromEnv({ SANDBOX_DISK_MAX: "512M" }).diskBytes).toBe(512 * MIB);
    expect(() => limitsFromEnv({ SANDBOX_DISK_MAX: "1M" })).toThrow(/SANDBOX_DISK_MAX/);
    expect(() => limitsFromEnv({ SANDBOX_DISK_MAX: "a lot" })).toThrow(/SANDBOX_DISK_MAX/);
  });
});

describe.skipIf(!canMount)("a sandbox's disk, on a host disk that keeps nothing for root", () => {
  it("left mounted by a runtime that crashed comes off before the next one starts anything", { timeout: 60_000 }, async () => {
    const leftDir = join(hostDisk, "left");
    const crashed = new SandboxDisks(leftDir, DISK_BYTES);
    const dir = join(leftDir, "dq-left");
    await crashed.open(dir, "dq-left");
    writeFileSync(join(dir, "written.txt"), "kept");
    expect(isMountPoint(dir)).toBe(true);
    // The next runtime on that data folder: nothing of the last one's stays mounted, what was written stays on its disk.
    const next = new SandboxDisks(leftDir, DISK_BYTES);
    next.reapLeftovers();
    expect(isMountPoint(dir)).toBe(false);
    const reopened = await next.open(dir, "dq-left");
    expect(readFileSync(join(dir, "written.txt"), "utf8")).toBe("kept");
    reopened!.release();
    expect(isMountPoint(dir)).toBe(false);
  });


  it("stops every way of writing past the limit with ENOSPC and 507, while another sandbox and the service write on", { timeout: 240_000 }, async () => {
    const filler = await pool.start("dq-filler", {});
    const other = await pool.start("dq-other", {});
    const before = hostFree();
    const full = /No space left on device/;

    const dd = await exec(filler, "dd if=/dev/zero of=/workspace/zeros bs=1M; df -k /workspace | tail -1");
    expect(dd.stderr).toMatch(full);
    // The disk the sandbox sees is its own, of its limit (give or take what ext4 keeps for itself).
    const size = Number(dd.stdout.trim().split(/\s+/)[1]) * 1024;
    expect(size).toBeGreaterThan(DISK_BYTES * 0.8);
    expect(size).toBeLessThan(DISK_BYTES * 1.4);

    // Every other way of writing, each from a disk with room again: refused when the disk is full.
    const attacks: [string, string][] = [
      ["head -c 200M /dev/zero > /tmp/fill", "rm -f /tmp/fill"],
      ["head -c 200M /dev/zero > /filled-root", "rm -f /filled-root"],
      ["fallocate -l 200M /root/allocated", "rm -f /root/allocated"],
      ["truncate -s 200M /var/sparse && dd if=/dev/zero of=/var/sparse bs=1M conv=notrunc", "rm -f /var/sparse"],
      // Its inodes run out long before the host's.
      ["mkdir -p /workspace/many && cd /workspace/many && i=0; while : > f$i; do i=$((i+1)); done", "rm -rf /workspace/many"],
      // A hard link and a move to another of its folders (a copy: another mount of the same disk) are counted again.
      ["head -c 20M /dev/zero > /workspace/a && ln /workspace/a /workspace/b && mv /workspace/b /home/b", "rm -f /workspace/a /workspace/b /home/b"],
    ];
    await exec(filler, "rm -f /workspace/zeros");
    for (const [attack, cleanup] of attacks) {
      expect(await freeInside(filler)).toBeGreaterThan(DISK_BYTES * 0.6);
      expect((await exec(filler, attack)).stderr).toMatch(full);
      await exec(filler, cleanup);
    }
    expect((await exec(filler, "dd if=/dev/zero of=/workspace/zeros bs=1M")).stderr).toMatch(full);

    // Through the API: 507, as any write that finds the disk full.
    const upload = await containerCall(filler, "POST", FILE_ROUTES.write, { path: "more.bin", content: Buffer.alloc(2 * MIB).toString("base64"), encoding: "base64" });
    expect(upload).toMatchObject({ status: 507, body: { code: "INSUFFICIENT_STORAGE" } });

    // The host's disk lost what the filler's disk holds, no more, and gets it back as the filler deletes.
    expect(before - hostFree()).toBeLessThan(DISK_BYTES * 1.5);
    await exec(filler, "rm -f /workspace/zeros");
    // (what its metadata took stays: inode tables, the journal)
    expect(await eventually(() => before - hostFree() < DISK_BYTES / 2, 15_000)).toBe(true);
    // The other sandbox writes and answers, through a command and the API.
    expect(await exec(other, "head -c 8M /dev/urandom > /workspace/data.bin && wc -c < /workspace/data.bin")).toMatchObject({ exitCode: 0, stdout: `${8 * MIB}\n` });
    expect((await containerCall(other, "POST", FILE_ROUTES.write, { path: "note.txt", content: "written" })).status).toBe(200);
    // The service's own state on the same host disk, written by the service (no reserve for root to lean on).
    writeFileSync(join(hostDisk, "service-state.bin"), Buffer.alloc(64 * MIB));
    rmSync(join(hostDisk, "service-state.bin"));
    // The filler answers too.
    expect(await exec(filler, "echo still")).toMatchObject({ stdout: "still\n" });
  });

  it("keeps what a sandbox wrote across its container's restarts, warm or cold, as before disks", { timeout: 180_000 }, async () => {
    const warmPool = newPool(1);
    try {
      expect(await eventually(() => warmPool.warmCount === 1, 30_000)).toBe(true);
      // A new sandbox takes the warm container, and its disk.
      const first = await warmPool.start("dq-kept", {});
      expect(warmPool.warmRunIds).not.toContain(first.runId);
      expect(await exec(first, "echo kept > /workspace/kept.txt && echo scratch > /tmp/scratch && df -k /workspace | tail -1 | awk '{print $2}'")).toMatchObject({ exitCode: 0 });
      await first.kill();
      // Restarted (cold: it has a disk of its own now), its workspace is as it was left, its layer new.
      const second = await warmPool.start("dq-kept", {});
      expect(await exec(second, "cat /workspace/kept.txt; test -e /tmp/scratch || echo anew")).toMatchObject({ stdout: "kept\nanew\n" });
      expect((await exec(second, "dd if=/dev/zero of=/workspace/zeros bs=1M count=100")).stderr).toMatch(/No space left on device/);
      await second.kill();

      // A workspace from before sandboxes had disks moves onto one, as it was.
      mkdirSync(join(dataDir, "dq-legacy", "workspace", "sub"), { recursive: true });
      writeFileSync(join(dataDir, "dq-legacy", "workspace", "sub", "old.txt"), "from before\n");
      const legacy = await warmPool.start("dq-legacy", {});
      expect(await exec(legacy, "cat /workspace/sub/old.txt")).toMatchObject({ stdout: "from before\n" });
      expect((await exec(legacy, "dd if=/dev/zero of=/workspace/zeros bs=1M count=100")).stderr).toMatch(/No space left on device/);
      await legacy.kill();
    } finally {
      await warmPool.stopAll();
    }
  });

  it("answers a new sandbox on a full host disk 507, and starts it once there is room", { timeout: 120_000 }, async () => {
    // Those running are promised the room they may still take (see the next test): they stop first.
    await pool.destroy("dq-filler");
    await pool.destroy("dq-other");
    const filling = join(hostDisk, "filling.bin");
    // The host's disk filled by someone else (the sandboxes' own disks cannot).
    spawnSync("fallocate", ["-l", String(hostFree()), filling]);
    spawnSync("sh", ["-c", `cat /dev/zero >> ${filling}`], { stdio: "ignore" });
    try {
      await expect(pool.start("dq-new", {})).rejects.toMatchObject({ code: "INSUFFICIENT_STORAGE" });
    } finally {
      rmSync(filling, { force: true });
    }
    const started = await pool.start("dq-new", {});
    expect(await exec(started, "echo up")).toMatchObject({ stdout: "up\n" });
  });
});

describe.skipIf(!canMount)("the disks of many sandboxes, on a host disk smaller than all of them together", () => {
  it("refuse the next sandbox 507 while the running ones could still fill the host; filled, they leave the service its room", { timeout: 240_000 }, async () => {
    // The earlier sandboxes' disks go: the host's disk as the service starts.
    await pool.stopAll();
    rmSync(dataDir, { recursive: true, force: true });
    expect(await eventually(() => hostFree() > 160 * MIB, 30_000)).toBe(true);
    const many = newPool(0);
    try {
      // As many as are asked for would take 12 × 40 MiB: far more than the host has.
      const started: string[] = [];
      const running: ContainerProcess[] = [];
      let refused: unknown;
      for (let i = 0; i < 12 && refused === undefined; i++) {
        try {
          running.push(await many.start(`dq-many-${i}`, {}));
          started.push(`dq-many-${i}`);
        } catch (error) {
          refused = error;
        }
      }
      expect(started.length).toBeGreaterThanOrEqual(2);
      expect(refused).toMatchObject({ code: "INSUFFICIENT_STORAGE", message: expect.stringMatching(/promised/) });
      const late = `dq-many-${started.length}`;
      const freeAtRefusal = hostFree();

      // Every one admitted fills its disk: each meets ENOSPC in itself, and the host keeps room for the service.
      for (const container of running) expect((await exec(container, "dd if=/dev/zero of=/workspace/zeros bs=1M")).stderr).toMatch(/No space left on device/);
      expect(hostFree()).toBeGreaterThan(4 * MIB);
      writeFileSync(join(hostDisk, "service-state.bin"), Buffer.alloc(4 * MIB));
      rmSync(join(hostDisk, "service-state.bin"));
      for (const container of running) expect(await exec(container, "echo still")).toMatchObject({ stdout: "still\n" });

      // Emptied, they are promised their room again: free space alone does not let another in.
      for (const container of running) await exec(container, "rm -f /workspace/zeros");
      // (what their metadata took stays: inode tables, the journal)
      expect(await eventually(() => hostFree() > freeAtRefusal - 4 * MIB * started.length, 30_000)).toBe(true);
      await expect(many.start(late, {})).rejects.toMatchObject({ code: "INSUFFICIENT_STORAGE" });
      // One stops: what it was promised is the next one's.
      await many.destroy(started[0]!);
      const next = await many.start(late, {});
      expect(await exec(next, "echo up")).toMatchObject({ stdout: "up\n" });
    } finally {
      await many.stopAll();
    }
  });
});

describe.skipIf(!canMount)("disks larger than the host's free space, written at once as fast as their sandboxes can", () => {
  it("hold each sandbox to what the host can give: the filler meets ENOSPC in its own disk, the others and the service go on", { timeout: 300_000 }, async () => {
    await pool.stopAll();
    rmSync(dataDir, { recursive: true, force: true });
    expect(await eventually(() => hostFree() > 160 * MIB, 30_000)).toBe(true);
    // Disks of 512 MiB on a host with under 192 MiB free: each alone could fill it. The room kept
    // ahead of each is scaled down with the host (16 MiB, where a real one is 256 MiB of many GiB).
    const bigDisk = 512 * MIB;
    const settings = containerSettings({ dataDir, limits: { ...DEFAULT_SANDBOX_LIMITS, diskBytes: bigDisk } });
    const big = new ContainerPool({
      dataDir,
      launcher: directLauncher,
      isolation: { mode: "bwrap", env: {} },
      stopGraceMs: 1_000,
      warmServers: 0,
      containers: { ...settings, disks: new SandboxDisks(dataDir, bigDisk, { promisedBytes: 16 * MIB }) },
    });
    let held: number | undefined;
    try {
      const running: ContainerProcess[] = [];
      for (let i = 0; i < 4; i++) {
        try {
          running.push(await big.start(`dq-big-${i}`, {}));
        } catch (error) {
          expect(error).toMatchObject({ code: "INSUFFICIENT_STORAGE" });
          break;
        }
      }
      expect(running.length).toBeGreaterThanOrEqual(2);
      // The disk a sandbox sees is its whole size; what it may write now, its room.
      const seen = (await exec(running[0]!, "df -k --output=size,avail /workspace | tail -1")).stdout.trim().split(/\s+/).map((kib) => Number(kib) * 1024);
      expect(seen[0]).toBeGreaterThan(bigDisk * 0.9);
      expect(seen[1]).toBeLessThan(bigDisk / 4);

      // All at once, each as fast as it can, for a while: big writes pushed to the host as they go,
      // space taken without writing, many small files; whatever fails, on again.
      const attack = `end=$(( $(date +%s) + 10 )); n=0
        while [ $(date +%s) -lt $end ]; do
          n=$((n+1))
          dd if=/dev/zero of=/workspace/dd$n bs=1M count=24 conv=fsync status=none
          fallocate -l 8M /workspace/fa$n
          mkdir -p /workspace/small$n && cd /workspace/small$n && for j in $(seq 100); do head -c 16384 /dev/urandom > f$j || break; done; cd /
        done 2>&1 | sed 's/.*: //' | sort | uniq -c; sync -f /workspace; echo synced $?`;
      const outcomes = await Promise.all(running.map((container) => exec(container, attack)));
      const said = outcomes.map((outcome) => outcome.stdout + outcome.stderr);
      // Filled, a sandbox is refused by its own disk: ENOSPC, never the I/O errors and read-only
      // file system of a host disk full under its image.
      expect(said.some((text) => /No space left on device/.test(text))).toBe(true);
      for (const text of said) {
        expect(text).not.toMatch(/Input\/output error|Read-only file system/);
        expect(text).toMatch(/synced 0/);
      }
      // Together they grew past the room each was given first, into the host's room.
      const used = await Promise.all(running.map(async (container) => Number((await exec(container, "df -k --output=used /workspace | tail -1")).stdout.trim()) * 1024));
      expect(used.reduce((sum, bytes) => sum + bytes, 0)).toBeGreaterThan(running.length * 16 * MIB + 8 * MIB);
      // The host keeps the service's reserve (5% of it), and the service writes its state there.
      const reserve = Math.floor(statfsSync(hostDisk).blocks * statfsSync(hostDisk).bsize * 0.05);
      expect(hostFree()).toBeGreaterThan(reserve * 0.75);
      writeFileSync(join(hostDisk, "service-state.bin"), Buffer.alloc(reserve / 2));
      rmSync(join(hostDisk, "service-state.bin"));
      // Every sandbox answers, and writes again once it has deleted: its file system is as it was.
      for (const container of running) {
        expect(await exec(container, "rm -rf /workspace/* && echo again > /workspace/after && cat /workspace/after")).toMatchObject({ exitCode: 0, stdout: "again\n" });
      }
      // What they deleted is no longer theirs: their limits come down to their room ahead again.
      const room = async (container: ContainerProcess) => Number((await exec(container, "df -k --output=avail /workspace | tail -1")).stdout.trim()) * 1024;
      for (const container of running) expect(await eventually(async () => (await room(container)) < 40 * MIB, 10_000, 200)).toBe(true);
      // One stops, and the others take its room as they write (the watch raises their limits), then
      // delete what they wrote: their limits stay above their use by more than their room ahead, but
      // less than twice it, where the watch leaves a limit be (as it does one lowered on a use about
      // to fall, while what was deleted is still on its way back). The next start settles them and
      // takes that room, at once: no retry, no wait.
      // The first deletes what it wrote last just before it stops, and its disk outlives its unmount
      // (a file of it held open here, as the kernel may hold it while it tears the container down):
      // what it deleted is still the host's at the next start, with nothing committed meanwhile.
      expect((await exec(running[0]!, "head -c 12M /dev/zero > /workspace/last && sync -f /workspace && rm /workspace/last")).exitCode).toBe(0);
      held = openSync(join(dataDir, "dq-big-0", "workspace", "after"), "r");
      await big.destroy("dq-big-0");
      for (const container of running.slice(1)) {
        expect((await exec(container, "head -c 12M /dev/zero > /workspace/held && sync -f /workspace")).exitCode).toBe(0);
        expect(await eventually(async () => (await room(container)) > 10 * MIB, 10_000, 100)).toBe(true);
        await exec(container, "rm -f /workspace/held");
      }
      const late = await big.start("dq-big-late", {});
      expect(await exec(late, "echo up")).toMatchObject({ stdout: "up\n" });
    } finally {
      if (held !== undefined) closeSync(held);
      await big.stopAll();
    }
  });
});
