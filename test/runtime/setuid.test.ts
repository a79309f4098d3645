/**
 * A sandbox plants setuid and setgid programs in a host folder it may write (`readWritePaths`, shared
 * with the machine's users), every way a command can set those bits, then a user of the machine runs
 * what was planted. No bit ever sticks (the container's seccomp filter), so the planted program runs as
 * that user, never as the sandbox's host uid; and a setuid file the uid owns there anyway (left by a
 * runtime without the filter, planted here from outside) is cleared when the uid is given back, which
 * is never while a process runs as it.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerPool } from "../../runtime/pool.ts";
import { directLauncher } from "../../runtime/launch.ts";
import { containerSettings } from "../../runtime/container/settings.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import type { ContainerProcess } from "../../runtime/container-process.ts";
import { containerCall, eventually, tempDataDir, type DataDir } from "./helpers.ts";

const asRoot = process.getuid?.() === 0;
/** A user of the machine who is not the sandbox (nobody). */
const HOST_USER = 65534;

let dataDir: DataDir;
let shared: string;
let pool: ContainerPool;
beforeAll(() => {
  dataDir = tempDataDir();
  shared = join(dataDir.path, "shared");
  mkdirSync(shared);
  chmodSync(shared, 0o777); // a folder every user of the machine writes, as /srv/share would be
  const dir = join(dataDir.path, "sandboxes");
  pool = new ContainerPool({
    dataDir: dir,
    launcher: directLauncher,
    isolation: { mode: "bwrap", env: {} },
    stopGraceMs: 1_000,
    containers: containerSettings({ dataDir: dir, allowedPaths: [shared] }),
  });
});
afterAll(async () => {
  await pool.stopAll();
  dataDir.remove();
});

const exec = async (container: ContainerProcess, command: string) =>
  (await containerCall(container, "POST", "/api/execute", { command, timeout: 20_000 })).body as { exitCode: number; stdout: string; stderr: string };

const hostUid = async (container: ContainerProcess) => Number((await exec(container, "awk '{print $2}' /proc/self/uid_map")).stdout.trim());

/** Every file under `dir` with a setuid or setgid bit, as the host sees it. */
function withSpecialBits(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const stats = lstatSync(join(dir, name));
    if (!stats.isSymbolicLink() && stats.mode & 0o6000) found.push(`${name} ${(stats.mode & 0o7777).toString(8)}`);
  }
  return found;
}

/** `program` run by a user of the machine: the uid it runs as (its `id -u`). */
function runAsHostUser(program: string, args: string[]): string {
  const ran = spawnSync("setpriv", [`--reuid=${HOST_USER}`, `--regid=${HOST_USER}`, "--clear-groups", "--", "/bin/sh", "-c", `"$@"`, "sh", program, ...args], {
    encoding: "utf8",
  });
  return ran.stdout.trim();
}

const PLANTS = `
cd ${"$SHARED"}
cp /bin/bash u-plus-s; chmod u+s u-plus-s
cp /bin/bash octal; chmod 4755 octal
cp /bin/bash both; chmod 6755 both
cp /bin/bash gplus; chmod g+s gplus
install -m 4755 /bin/bash installed
cp -p /usr/bin/passwd copied-p
cp /bin/bash linked-target; ln -s linked-target link
python3 - <<'EOF'
import os, shutil
def tried(name, what):
    try:
        what()
        print(name, "allowed")
    except OSError as error:
        print(name, error.errno)
shutil.copy("/bin/bash", "py-chmod")
tried("os.chmod", lambda: os.chmod("py-chmod", 0o4755))
fd = os.open(".", os.O_RDONLY)
shutil.copy("/bin/bash", "py-at")
tried("fchmodat", lambda: os.chmod("py-at", 0o6755, dir_fd=fd))
tried("fchmodat-link", lambda: os.chmod("link", 0o4755, dir_fd=fd))
with open("py-fchmod", "wb") as f:
    f.write(open("/bin/bash", "rb").read())
    tried("fchmod", lambda: os.fchmod(f.fileno(), 0o4755))
tried("open-creat", lambda: os.close(os.open("py-creat", os.O_CREAT | os.O_WRONLY, 0o4755)))
tried("mknod", lambda: os.mknod("py-mknod", 0o100000 | 0o6755))
EOF
mkdir sgid-dir; chmod g+s sgid-dir; chmod 2775 sgid-dir
chmod 755 installed py-fchmod
`;

describe.skipIf(!detectIsolation().bwrap.available)("setuid and setgid bits made inside a sandbox", () => {
  it("are refused every way a command sets them, so a planted program runs as whoever runs it", async () => {
    const container = await pool.start("setuid-planter", { isolation: { readWritePaths: [shared] } });
    const uid = await hostUid(container);
    const planted = await exec(container, `SHARED=${shared}\n${PLANTS}`);
    // Each way was refused (EPERM), never allowed, and the plain copies are there.
    for (const name of ["os.chmod", "fchmodat", "fchmodat-link", "fchmod", "open-creat", "mknod"]) expect(planted.stdout).toContain(`${name} 1\n`);
    expect(planted.stdout).not.toContain("allowed");
    expect(planted.stderr).toMatch(/chmod: changing permissions of 'u-plus-s': Operation not permitted/);
    expect(planted.stderr).toMatch(/install: cannot change permissions/);
    expect(lstatSync(join(shared, "octal")).isFile()).toBe(true);

    // Not one file under the shared folder carries either bit.
    expect(withSpecialBits(shared)).toEqual([]);
    // What the sandbox still may: ordinary modes, and the server's own work.
    expect((await exec(container, `cd ${shared} && cp /bin/true plain && chmod 750 plain && stat -c %a plain`)).stdout).toBe("750\n");
    expect((await exec(container, "echo ok")).stdout).toBe("ok\n");

    if (!asRoot) return;
    // A user of the machine runs what was planted: it runs as that user, never as the sandbox's uid.
    expect(uid).not.toBe(HOST_USER);
    for (const program of ["u-plus-s", "octal", "both", "gplus", "installed", "linked-target", "py-chmod", "py-at", "py-fchmod"]) {
      expect(runAsHostUser(join(shared, program), ["-p", "-c", "id -u"]), program).toBe(String(HOST_USER));
    }
  });

  it.skipIf(!asRoot)("left in a writable host folder anyway are cleared when the uid is given back, never while a process runs as it", async () => {
    const first = await pool.start("setuid-leaver", { isolation: { readWritePaths: [shared] } });
    const uid = await hostUid(first);
    // A setuid shell of the sandbox's uid, as a runtime without the filter would have let it leave.
    const leftover = join(shared, "left-behind");
    copyFileSync("/bin/bash", leftover);
    chownSync(leftover, uid, uid);
    chmodSync(leftover, 0o6755);
    mkdirSync(join(shared, "deep", "er"), { recursive: true });
    const deep = join(shared, "deep", "er", "sh");
    copyFileSync("/bin/bash", deep);
    chownSync(deep, uid, uid);
    chmodSync(deep, 0o4755);
    // A user of the machine runs it while the sandbox lives: a process of the sandbox's uid, on the host.
    // The sandbox copies it keeping its mode (its own file now: ownership is kept, the bits are refused).
    const copied = await exec(first, `cd ${shared} && cp -p left-behind kept-mode; stat -c %a kept-mode`);
    expect(copied.stdout).toMatch(/^[0-7]{3}\n$/); // no fourth digit: neither bit
    expect(copied.stderr).toMatch(/cp: preserving permissions for .kept-mode.: Operation not permitted/);
    const holder = spawn("setpriv", [`--reuid=${HOST_USER}`, `--regid=${HOST_USER}`, "--clear-groups", "--", leftover, "-p", "-c", "exec sleep 600"], { stdio: "ignore" });
    try {
      const euid = () => Number(spawnSync("ps", ["-o", "euid=", "-p", String(holder.pid)], { encoding: "utf8" }).stdout.trim());
      expect(await eventually(() => euid() === uid)).toBe(true);
      await pool.destroy("setuid-leaver");
      // Given back: the bits are cleared, as far down as the file lies.
      await eventually(() => withSpecialBits(shared).length === 0);
      expect(withSpecialBits(shared)).toEqual([]);
      expect([statSync(leftover).mode & 0o7777, statSync(deep).mode & 0o7777]).toEqual([0o755, 0o755]);
      // The process of that uid still runs: no sandbox gets it, whichever asks.
      const next = await Promise.all(["setuid-next-a", "setuid-next-b", "setuid-next-c"].map((key) => pool.start(key, {})));
      const given = await Promise.all(next.map(hostUid));
      expect(given).not.toContain(uid);
      for (const key of ["setuid-next-a", "setuid-next-b", "setuid-next-c"]) await pool.destroy(key);
    } finally {
      holder.kill("SIGKILL");
    }
    // Once it is gone, the uid is lent again.
    expect(await eventually(() => spawnSync("ps", ["-p", String(holder.pid)]).status !== 0)).toBe(true);
    // Lent to the next start once nothing of it runs (the kernel may take a moment over the last exits).
    let attempt = 0;
    const lentAgain = await eventually(async () => {
      const key = `setuid-again-${attempt++}`;
      const got = await hostUid(await pool.start(key, {}));
      if (got !== uid) await pool.destroy(key);
      return got === uid;
    }, 30_000, 500);
    expect(lentAgain).toBe(true);
  });
});
