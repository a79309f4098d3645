/**
 * What a confined command makes cannot hand the host to anyone: under bwrap commands run as an
 * unprivileged user in a user namespace, cannot mark a file setuid, a file in their folder is unreachable to other users of the
 * machine (sandbox folders are 0700, also inside a data directory others may enter), and the files
 * API takes permission bits only (no setuid, setgid or sticky bit).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { directLauncher } from "../../runtime/launch.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall, tempDataDir, type DataDir } from "./helpers.ts";

const bwrap = detectIsolation().bwrap.available;
const asRoot = process.getuid?.() === 0;

let dataDir: DataDir;
let sandboxes: string;
let pool: ContainerPool;
beforeAll(() => {
  dataDir = tempDataDir();
  // A data directory any local user may enter, as `.sandbox` in a checkout under /home or /srv is.
  chmodSync(dataDir.path, 0o755);
  sandboxes = join(dataDir.path, "sandboxes");
  mkdirSync(sandboxes, { mode: 0o755 });
  pool = new ContainerPool({ dataDir: sandboxes, launcher: directLauncher, isolation: { mode: "bwrap", env: {} } });
});
afterAll(async () => {
  await pool.stopAll();
  dataDir.remove();
});

describe.skipIf(!bwrap)("a command under bwrap", () => {
  it("runs as root of its own user namespace, which is an unprivileged user of the host", async () => {
    const container = await pool.start("unpriv-id", {});
    const reply = await containerCall(container, "POST", "/api/execute", { command: "id -u; id -g; cat /proc/self/uid_map; touch made-here" });
    const [uid, gid, ...map] = reply.body.stdout.trim().split("\n");
    // Root inside, as in the image.
    expect([uid, gid]).toEqual(["0", "0"]);
    // Only that one id is mapped, to a host user that is not root (where the runtime is root, one of its own).
    expect(map).toHaveLength(1);
    const [inside, outside, count] = map[0]!.trim().split(/\s+/).map(Number);
    expect([inside, count]).toEqual([0, 1]);
    if (!asRoot) expect(outside).toBe(process.getuid!());
    expect(outside).not.toBe(0);
    // What it makes belongs to that host user on disk.
    expect(statSync(join(sandboxes, "unpriv-id", "workspace", "made-here")).uid).toBe(outside);
  });

  it("gives two live sandboxes two host users when the runtime is root", async () => {
    const [a, b] = await Promise.all([pool.start("unpriv-a", {}), pool.start("unpriv-b", {})]);
    const owner = async (container: typeof a) =>
      Number((await containerCall(container, "POST", "/api/execute", { command: "awk '{print $2}' /proc/self/uid_map" })).body.stdout.trim());
    const [ua, ub] = await Promise.all([owner(a), owner(b)]);
    if (asRoot) expect(ua).not.toBe(ub);
    else expect([ua, ub]).toEqual([process.getuid!(), process.getuid!()]);
  });

  it("cannot leave a setuid program another user of the machine can run", async () => {
    const container = await pool.start("unpriv-setuid", {});
    // The container's seccomp filter refuses the bit (setuid.test.ts attacks it every way); the file stays.
    const made = await containerCall(container, "POST", "/api/execute", { command: "cp /bin/bash rootsh && chmod 4755 rootsh; stat -c %a rootsh" });
    expect(made.body.stdout).toBe("755\n");
    expect(made.body.stderr).toMatch(/Operation not permitted/);
    const program = join(sandboxes, "unpriv-setuid", "workspace", "rootsh");
    // Only the container's own user passes into its folder (by group), and lists nothing there.
    expect(statSync(join(sandboxes, "unpriv-setuid")).mode & 0o777).toBe(asRoot ? 0o710 : 0o700);
    if (!asRoot) {
      // Run by anyone else it would be setuid to this user only: nothing to gain.
      expect(statSync(program).uid).toBe(process.getuid!());
      return;
    }
    // Another user of the machine tries to run it, for a root shell (from a shell of theirs: setpriv
    // itself resolves the program it is given before it changes user).
    const tried = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/sh", "-c", `${program} -p -c 'id -u'`], {
      encoding: "utf8",
    });
    expect(tried.stdout).not.toBe("0\n");
    expect(tried.status).not.toBe(0);
    expect(tried.stderr).toMatch(/Permission denied/);
  });
});

describe("the files API", () => {
  it("takes permission bits only: no setuid, setgid or sticky bit", async () => {
    const plain = new ContainerPool({ dataDir: join(dataDir.path, "plain"), launcher: directLauncher, isolation: { mode: "none", env: {} } });
    try {
      const container = await plain.start("modes", {});
      for (const mode of [0o4755, 0o2755, 0o1777, "4755", "6755"]) {
        const reply = await containerCall(container, "POST", "/api/files/write", { path: "x.sh", content: "#!/bin/sh\n", mode });
        expect(reply.status, String(mode)).toBe(400);
        expect(reply.body).toMatchObject({ code: "INVALID_REQUEST" });
      }
      expect((await containerCall(container, "POST", "/api/files/mkdir", { path: "d", mode: 0o1777 })).status).toBe(400);
      const ok = await containerCall(container, "POST", "/api/files/write", { path: "x.sh", content: "#!/bin/sh\n", mode: "755" });
      expect(ok.status).toBe(200);
      expect(execFileSync("stat", ["-c", "%a", join(dataDir.path, "plain", "modes", "workspace", "x.sh")], { encoding: "utf8" })).toBe("755\n");
    } finally {
      await plain.stopAll();
    }
  });
});
