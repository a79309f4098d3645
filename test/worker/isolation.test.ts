/**
 * Native isolation per sandbox, asked for through getSandbox() options and applied by the local
 * runtime (bubblewrap): writes confined, other sandboxes and the host's processes invisible, network
 * cut unless allowed, env vars unable to loosen any of it, and a clear error where bwrap is missing.
 * An unconfined sandbox looks at the host alongside, so every wall is checked from the outside too.
 */
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { IsolationUnavailableError } from "../../src/client/index.ts";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import { sandboxPool, sendToRuntime, uniqueId } from "./helpers.ts";

const sandboxes = sandboxPool();
afterAll(() => sandboxes.destroyAll());

const runtimePort = new URL(inject("runtimeUrl")).port;
/** Bash's own TCP client: exit 0 only if the connection opened. */
const connectToRuntime = `exec 3<>/dev/tcp/127.0.0.1/${runtimePort} && echo connected`;

describe("bwrap sandboxes", () => {
  let host: SandboxClient;
  let a: SandboxClient;
  let b: SandboxClient;
  /** Where a's workspace is on the host (a sees it as /workspace). */
  let aWorkspace: string;

  beforeAll(async () => {
    host = sandboxes.create("iso-host");
    a = sandboxes.create("iso-a", { isolation: "bwrap" });
    b = sandboxes.create("iso-b", { isolation: "bwrap" });
    expect((await a.getInfo()).workspace).toBe("/workspace");
    await a.writeFile("whoami.txt", "iso-a");
    // The unconfined sandbox runs on the host: its workspace's folder is the runtime's data folder.
    const dataDir = (await host.getInfo()).workspace.replace(/\/[^/]+\/workspace$/, "");
    aWorkspace = (await host.exec(`dirname $(grep -lx iso-a ${dataDir}/*/workspace/whoami.txt)`)).stdout.trim();
    expect(aWorkspace).toMatch(/\/workspace$/);
  });

  it("run with the isolation they asked for", async () => {
    expect((await a.getInfo()).isolation).toMatchObject({ mode: "bwrap", allowNetwork: false, pidNamespace: true, readWritePaths: [] });
    expect((await host.getInfo()).isolation).toMatchObject({ mode: "none" });
    expect(await a.getInstructions()).toMatch(/bubblewrap/);
  });

  it("can write in their workspace and nowhere else on the host", async () => {
    const sandboxDir = aWorkspace.replace(/\/workspace$/, "");
    expect((await a.exec("echo kept > inside.txt && cat inside.txt")).stdout).toBe("kept\n");
    expect((await host.exec(`cat ${aWorkspace}/inside.txt`)).stdout).toBe("kept\n");

    for (const target of ["/etc/escape-test", "/usr/escape-test", `${sandboxDir}/escape.txt`, `${sandboxDir}/container.log`]) {
      await a.exec(`echo leaked >> ${target}`);
      const seen = await host.exec(`grep -l leaked ${target} 2>/dev/null || echo clean`);
      expect(seen.stdout, target).toBe("clean\n");
    }
    expect((await a.exec("echo x > /etc/escape-test")).exitCode).not.toBe(0);
  });

  it("cannot see another sandbox's files, though the host can", async () => {
    await a.writeFile("secret.txt", "a's secret");
    expect((await host.exec(`cat ${aWorkspace}/secret.txt`)).stdout).toBe("a's secret");
    const peek = await b.exec(`cat ${aWorkspace}/secret.txt; ls ${aWorkspace}`);
    expect(peek.exitCode).not.toBe(0);
    expect(peek.stdout).not.toContain("secret");
  });

  it("see only their own processes", async () => {
    const count = "ls /proc | grep -c '^[0-9][0-9]*$'";
    const inside = Number((await a.exec(count)).stdout);
    const outside = Number((await host.exec(count)).stdout);
    expect(inside).toBeLessThan(10);
    expect(outside).toBeGreaterThan(inside + 5);
  });

  it("have no network unless allowed, and then one of their own without the host's loopback", async () => {
    const defaultRoute = "awk 'NR > 1 && $2 == \"00000000\" { print $1 }' /proc/net/route";
    expect((await host.exec(connectToRuntime)).stdout).toBe("connected\n");
    expect((await a.exec(connectToRuntime)).exitCode).not.toBe(0);
    expect((await a.exec(defaultRoute)).stdout).toBe("");
    const open = sandboxes.create("iso-net", { isolation: "bwrap", allowNetwork: true });
    expect((await open.exec(connectToRuntime)).exitCode).not.toBe(0);
    // Its one way out: a default route on its own loopback, where the runtime's egress proxy takes every connection.
    expect((await open.exec(defaultRoute)).stdout).toBe("lo\n");
    expect((await open.getInfo()).isolation).toMatchObject({ mode: "bwrap", allowNetwork: true });
  });

  it("mount extra paths read-only or read-write as configured", async () => {
    const hostDir = inject("sharedDir");
    await host.exec(`cd ${hostDir} && mkdir -p ro rw && echo shared > ro/data.txt && chmod 777 rw`);
    const c = sandboxes.create("iso-paths", { isolation: "bwrap", readOnlyPaths: [`${hostDir}/ro`], readWritePaths: [`${hostDir}/rw`] });
    expect((await c.exec(`cat ${hostDir}/ro/data.txt`)).stdout).toBe("shared\n");
    expect((await c.exec(`echo no > ${hostDir}/ro/data.txt`)).exitCode).not.toBe(0);
    expect((await c.exec(`echo yes > ${hostDir}/rw/out.txt`)).exitCode).toBe(0);
    expect((await host.exec(`cd ${hostDir} && cat rw/out.txt ro/data.txt`)).stdout).toBe("yes\nshared\n");
    // File operations see the same: read-only is read-only.
    expect((await c.readFile(`${hostDir}/ro/data.txt`)).content).toBe("shared\n");
    await expect(c.writeFile(`${hostDir}/ro/data.txt`, "no")).rejects.toMatchObject({ code: "PERMISSION_DENIED", httpStatus: 403 });
  });

  it("cannot be loosened by the sandbox's env vars", async () => {
    const sneaky = sandboxes.create("iso-env", {
      isolation: "bwrap",
      envVars: {
        SANDBOX_ISOLATION: "none",
        SANDBOX_ALLOW_NETWORK: "1",
        SANDBOX_ENABLE_INTERNET: "1",
        SANDBOX_READ_WRITE_PATHS: "/",
        SANDBOX_BWRAP_ARGS: '["--bind","/","/"]',
        SANDBOX_BWRAP_PATH: "/bin/env",
      },
    });
    expect((await sneaky.getInfo()).isolation).toMatchObject({ mode: "bwrap", allowNetwork: false, readWritePaths: [] });
    expect((await sneaky.exec(connectToRuntime)).exitCode).not.toBe(0);
    expect((await sneaky.exec("echo x > /etc/escape-test")).exitCode).not.toBe(0);
    // The variables themselves still reach commands, as env vars do.
    expect((await sneaky.exec('echo "$SANDBOX_ISOLATION"')).stdout).toBe("none\n");
  });

  it("changing the isolation restarts the container with the new walls", async () => {
    const sandbox = sandboxes.create("iso-switch");
    const before = await sandbox.getInfo();
    expect(before.isolation.mode).toBe("none");
    await sandbox.configure({ isolation: "bwrap" });
    const after = await sandbox.getInfo();
    expect(after.isolation.mode).toBe("bwrap");
    expect(after.generationNumber).toBe(before.generationNumber + 1);
    // The same settings again change nothing.
    await sandbox.configure({ isolation: "bwrap" });
    expect((await sandbox.info()).generation).toBe(after.generation);
  });
});

describe("bwrap where it is missing", () => {
  it("fails with ISOLATION_UNAVAILABLE, never runs unconfined", async () => {
    const id = uniqueId("iso-missing");
    // This sandbox's container comes from the runtime whose servers find no bubblewrap.
    await sendToRuntime(id, "noBwrap");
    const sandbox = getSandbox(env.Sandbox, id, { isolation: "bwrap" });
    const started = Date.now();
    const error = await sandbox.exec("echo should-not-run").catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error).toBeInstanceOf(IsolationUnavailableError);
    expect(error).toMatchObject({ code: "ISOLATION_UNAVAILABLE", httpStatus: 501 });
    expect((error as Error).message).toMatch(/bwrap/);
    // Again on the next call: no silent downgrade after a failure either.
    await expect(sandbox.exec("echo should-not-run")).rejects.toBeInstanceOf(IsolationUnavailableError);
    // Without bwrap, the same machine still runs an unconfined sandbox.
    await sandbox.configure({ isolation: "none" });
    expect((await sandbox.exec("echo runs")).stdout).toBe("runs\n");
    await sandbox.destroy();
  });
});
