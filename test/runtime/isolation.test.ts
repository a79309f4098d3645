/**
 * The isolation each container server starts with (runtime/isolation.ts): the runtime's defaults,
 * overridden field by field by the sandbox's request, handed to the server as env vars written after
 * the sandbox's own (runtime/launch.ts); and a real server reporting what it was given. And the
 * container's root directory: writable as a container's is, backed by the sandbox's own layer on
 * disk and made anew each start, with nothing of the host or another sandbox reachable through it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ISOLATION_ENV, type IsolationSupport } from "../../protocol/isolation.ts";
import { IMAGE_ENV_VAR, type RuntimeStartRequest } from "../../protocol/runtime.ts";
import { directLauncher, serverEnv, type LaunchSpec } from "../../runtime/launch.ts";
import { BWRAP_PATH_VAR, parseIsolationMode, resolveIsolation } from "../../runtime/isolation.ts";
import { ContainerPool } from "../../runtime/pool.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { containerCall, tempDataDir, type DataDir } from "./helpers.ts";

describe("the runtime's isolation mode", () => {
  const withBwrap: IsolationSupport = { none: { available: true }, bwrap: { available: true, version: "0.8.0" } };
  const withoutBwrap: IsolationSupport = { none: { available: true }, bwrap: { available: false, reason: "bwrap (bubblewrap) is not installed" } };

  it("is bwrap unless none is asked for, and only a known mode", () => {
    expect(parseIsolationMode(undefined, withBwrap)).toBe("bwrap");
    expect(parseIsolationMode("", withBwrap)).toBe("bwrap");
    expect(parseIsolationMode("none", withBwrap)).toBe("none");
    expect(parseIsolationMode("none", withoutBwrap)).toBe("none");
    expect(parseIsolationMode("bwrap", withBwrap)).toBe("bwrap");
    expect(() => parseIsolationMode("docker", withBwrap)).toThrow(/Unknown isolation "docker".*none, bwrap/);
  });

  it("without bubblewrap, is an error that says how to install it or how to ask for none", () => {
    expect(() => parseIsolationMode(undefined, withoutBwrap)).toThrow(/not installed.*apt-get install bubblewrap.*SANDBOX_ISOLATION=none/s);
  });
});

describe("resolveIsolation", () => {
  it("takes the defaults when the sandbox asks for nothing: no network, nothing extra", () => {
    expect(resolveIsolation({ mode: "none", env: {} })).toEqual({
      mode: "none",
      env: {
        [ISOLATION_ENV.mode]: "none",
        [ISOLATION_ENV.allowNetwork]: "0",
        [ISOLATION_ENV.enableInternet]: "0",
        [ISOLATION_ENV.readOnlyPaths]: "",
        [ISOLATION_ENV.readWritePaths]: "",
        [ISOLATION_ENV.bwrapArgs]: "",
        [ISOLATION_ENV.allowSystemBinaries]: "",
        [BWRAP_PATH_VAR]: "",
      },
    });
  });

  it("reads the runtime's own defaults from its environment", () => {
    const env = {
      [ISOLATION_ENV.allowNetwork]: "1",
      [ISOLATION_ENV.readOnlyPaths]: "/opt/tools",
      [ISOLATION_ENV.allowSystemBinaries]: "0",
      [BWRAP_PATH_VAR]: "/opt/bwrap",
    };
    const resolved = resolveIsolation({ mode: "bwrap", env });
    expect(resolved.mode).toBe("bwrap");
    expect(resolved.env).toMatchObject({
      [ISOLATION_ENV.mode]: "bwrap",
      [ISOLATION_ENV.allowNetwork]: "1",
      [ISOLATION_ENV.readOnlyPaths]: "/opt/tools",
      [ISOLATION_ENV.allowSystemBinaries]: "0",
      [BWRAP_PATH_VAR]: "/opt/bwrap",
    });
    // An explicit bwrap path wins over the environment's.
    expect(resolveIsolation({ mode: "none", bwrapPath: "/usr/bin/bwrap", env }).env[BWRAP_PATH_VAR]).toBe("/usr/bin/bwrap");
  });

  it("lets the sandbox's request override each field", () => {
    const env = { [ISOLATION_ENV.allowNetwork]: "1", [ISOLATION_ENV.readOnlyPaths]: "/opt/tools" };
    const resolved = resolveIsolation(
      { mode: "none", env },
      { isolation: "bwrap", allowNetwork: false, readOnlyPaths: ["/data"], readWritePaths: ["/scratch"], bwrapArgs: ["--unshare-uts"], allowSystemBinaries: true },
    );
    expect(resolved).toEqual({
      mode: "bwrap",
      env: {
        [ISOLATION_ENV.mode]: "bwrap",
        [ISOLATION_ENV.allowNetwork]: "0",
        [ISOLATION_ENV.enableInternet]: "0",
        [ISOLATION_ENV.readOnlyPaths]: '["/data"]',
        [ISOLATION_ENV.readWritePaths]: '["/scratch"]',
        [ISOLATION_ENV.bwrapArgs]: '["--unshare-uts"]',
        [ISOLATION_ENV.allowSystemBinaries]: "1",
        [BWRAP_PATH_VAR]: "",
      },
    });
  });

  it("never gives commands the network when the platform's enableInternet is off", () => {
    const env = { [ISOLATION_ENV.allowNetwork]: "1" };
    expect(resolveIsolation({ mode: "none", env }, {}, false).env[ISOLATION_ENV.allowNetwork]).toBe("0");
    expect(resolveIsolation({ mode: "none", env }, { allowNetwork: true }, false).env[ISOLATION_ENV.allowNetwork]).toBe("0");
    expect(resolveIsolation({ mode: "none", env: {} }, { allowNetwork: true }, true).env[ISOLATION_ENV.allowNetwork]).toBe("1");
  });
});

describe("the server's environment", () => {
  const spec = (env: Record<string, string>): LaunchSpec => {
    const isolation = resolveIsolation({ mode: "bwrap", env: {} }, { allowNetwork: false });
    return { key: "k", port: 4321, sandboxDir: "/tmp/k", workspace: "/tmp/k/workspace", env, enableInternet: true, isolation: isolation.mode, isolationEnv: isolation.env };
  };

  it("carries the isolation after the sandbox's env vars, which can neither loosen it nor steer the server", () => {
    const env = serverEnv(
      spec({ GREETING: "hi", [ISOLATION_ENV.mode]: "none", [ISOLATION_ENV.allowNetwork]: "1", PORT: "1", NODE_OPTIONS: "--inspect", LD_PRELOAD: "/x.so", PATH: "/evil" }),
    );
    expect(env).toMatchObject({ GREETING: "hi", [ISOLATION_ENV.mode]: "bwrap", [ISOLATION_ENV.allowNetwork]: "0", PORT: "4321", SANDBOX_ID: "k" });
    expect(env.NODE_OPTIONS).toBeUndefined();
    expect(env.LD_PRELOAD).toBeUndefined();
    expect(env.PATH).toBe(process.env.PATH);
  });

  it("lays the sandbox's env vars over the image's ENV, less the image's settings for the server, and says it is the image's", () => {
    const env = serverEnv(spec({ GREETING: "hi" }));
    // container/Dockerfile: DEBIAN_FRONTEND for commands; PORT, HOST, SANDBOX_HOME and NODE_ENV for the server there, not here.
    expect(env).toMatchObject({ GREETING: "hi", DEBIAN_FRONTEND: "noninteractive", [IMAGE_ENV_VAR]: "1", PORT: "4321", HOST: "127.0.0.1" });
    expect(env.SANDBOX_HOME).toBeUndefined();
    expect(env.NODE_ENV).toBeUndefined();
    expect(serverEnv(spec({ DEBIAN_FRONTEND: "readline" })).DEBIAN_FRONTEND).toBe("readline");
  });
});

describe("a container server started with a sandbox's isolation", () => {
  let dataDir: DataDir;
  let pool: ContainerPool;
  beforeAll(() => {
    dataDir = tempDataDir();
    pool = new ContainerPool({ dataDir: dataDir.path, launcher: directLauncher, isolation: { mode: "none", env: {} } });
  });
  afterAll(async () => {
    await pool.stopAll();
    dataDir.remove();
  });

  /** Starts the key's server with `request` and returns its URL and the isolation it reports. */
  const startWith = async (key: string, request: RuntimeStartRequest) => {
    const container = await pool.start(key, request);
    return { container, isolation: (await containerCall(container, "GET", "/api/info")).body.isolation };
  };

  it("reports the runtime's defaults when the sandbox asks for nothing", async () => {
    expect((await startWith("iso-default", {})).isolation).toMatchObject({ mode: "none", readOnlyPaths: [], readWritePaths: [] });
  });

  it("reports the paths the sandbox asked for", async () => {
    const shared = realpathSync(tmpdir());
    const { isolation } = await startWith("iso-paths", { isolation: { readOnlyPaths: [shared] } });
    expect(isolation).toMatchObject({ mode: "none", readOnlyPaths: [shared] });
  });

  it.skipIf(!detectIsolation().bwrap.available)("runs under bwrap without network when asked", async () => {
    const { container, isolation } = await startWith("iso-bwrap", { isolation: { isolation: "bwrap", allowNetwork: false } });
    expect(isolation).toMatchObject({ mode: "bwrap", allowNetwork: false, pidNamespace: true });
    // In its own pid namespace a command sees only its own processes.
    const ps = await containerCall(container, "POST", "/api/execute", { command: "ls /proc | grep -c '^[0-9]'" });
    expect(Number(ps.body.stdout.trim())).toBeLessThan(10);
  });
});

describe.skipIf(!detectIsolation().bwrap.available)("a container's root directory", () => {
  let dataDir: DataDir;
  let pool: ContainerPool;
  beforeAll(() => {
    dataDir = tempDataDir();
    // A warm container too: the second start of a sandbox takes it, layer and all.
    pool = new ContainerPool({ dataDir: dataDir.path, launcher: directLauncher, isolation: { mode: "bwrap", env: {} }, stopGraceMs: 1_000, warmServers: 1 });
  });
  afterAll(async () => {
    await pool.stopAll();
    dataDir.remove();
  });

  const exec = async (container: Awaited<ReturnType<ContainerPool["start"]>>, command: string) =>
    (await containerCall(container, "POST", "/api/execute", { command })).body as { exitCode: number; stdout: string; stderr: string };
  const rootDir = (key: string) => join(dataDir.path, key, "layer", "root-dir");

  it("takes writes at the top level into the sandbox's own layer on disk: not the host's root, not another sandbox's", async () => {
    const [a, b] = await Promise.all([pool.start("root-a", {}), pool.start("root-b", {})]);
    const made = await exec(a, "echo at-the-root > /root-probe && mkdir /data && head -c 100000 /dev/zero > /data/blob && awk '{print $2}' /proc/self/uid_map");
    expect(made.exitCode).toBe(0);
    const hostUid = Number(made.stdout.trim());
    expect(existsSync("/root-probe")).toBe(false);
    expect(statSync(join(rootDir("root-a"), "root-probe"))).toMatchObject({ uid: hostUid, size: 12 });
    expect(statSync(join(rootDir("root-a"), "data", "blob")).size).toBe(100_000);
    expect((await exec(b, "test -e /root-probe || test -e /data || echo absent")).stdout).toBe("absent\n");
    // The mount points bwrap made are in the layer's root folder, empty on the host's side.
    expect(readdirSync(join(rootDir("root-a"), "usr"))).toEqual([]);
    // On the same disk as /tmp, under the same bounds (the data directory's file system), never in memory.
    expect((await exec(a, "stat -f -c %i / /tmp | uniq | wc -l")).stdout).toBe("1\n");
  });

  it("reaches nothing outside the container through a link planted at the root, and a restart wipes the link, not its target", async () => {
    const canary = join(dataDir.path, "canary");
    mkdirSync(canary, { mode: 0o755 });
    writeFileSync(join(canary, "secret"), "host only");
    const a = await pool.start("root-links", {});
    const b = await pool.start("root-other", {});
    await exec(b, "echo other > /workspace/secret");
    const otherSecret = join(dataDir.path, "root-other", "workspace", "secret");
    const planted = await exec(a, `ln -s ${canary} /to-host && ln -s ${canary}/secret /to-file && ln -s ${otherSecret} /to-other && echo planted`);
    expect(planted.stdout).toBe("planted\n");
    const followed = await exec(a, "cat /to-host/secret /to-file /to-other 2>&1");
    expect(followed.stdout).not.toMatch(/host only|other\n/);
    expect(followed.stdout).toMatch(/No such file/);
    // The files API resolves them as the container does.
    expect((await containerCall(a, "POST", "/api/files/read", { path: "/to-file" })).status).toBe(404);
    await pool.destroy("root-links");
    const again = await pool.start("root-links", {});
    expect((await exec(again, "ls -A / | grep -c '^to-' ; echo ok")).stdout).toBe("0\nok\n");
    expect(readdirSync(canary)).toEqual(["secret"]);
    expect(statSync(otherSecret).size).toBe(6);
  });

  it("is fresh after a restart, and writable again", async () => {
    const first = await pool.start("root-fresh", {});
    await exec(first, "echo before > /left-behind && mkdir -p /data/x");
    await pool.destroy("root-fresh");
    const second = await pool.start("root-fresh", {});
    expect((await exec(second, "test -e /left-behind || test -e /data || echo fresh; echo after > /left-behind && cat /left-behind")).stdout).toBe("fresh\nafter\n");
  });
});
