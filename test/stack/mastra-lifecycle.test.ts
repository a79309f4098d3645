/**
 * EdgeSandbox's lifecycle as Mastra drives it (`_start`, `_stop`, `_destroy`), over HTTP against the
 * real stack: what start reaches, how bad connection details fail, what survives a stop, isolation
 * options mapped onto the sandbox's config, and what the sandbox says about itself.
 */
import { IsolationUnavailableError, SandboxUnsupportedFeatureError, type NativeSandboxConfig } from "@mastra/core/workspace";
import { afterAll, describe, expect, it } from "vitest";
import { EdgeSandbox } from "../../src/adapters/mastra/index.ts";
import { InvalidRequestError, SandboxAuthError, SandboxConnectionError } from "../../src/client/index.ts";
import { httpConnection } from "./helpers.ts";

const made: EdgeSandbox[] = [];
function sandbox(label: string, options: Partial<ConstructorParameters<typeof EdgeSandbox>[0]> = {}): EdgeSandbox {
  const created = new EdgeSandbox({ ...httpConnection(label), ...options } as ConstructorParameters<typeof EdgeSandbox>[0]);
  made.push(created);
  return created;
}
afterAll(async () => {
  await Promise.all(made.map((s) => s.client.destroy().catch(() => undefined)));
});

// Each test has its own sandbox: they run at once.
describe.concurrent("EdgeSandbox lifecycle", () => {
  it("is identified by its sandbox id and starts by reaching the service", async () => {
    const s = sandbox("mastra-start");
    expect(s.id).toBe(s.client.id);
    expect(s.provider).toBe("edge");
    expect(s.name).toBe("EdgeSandbox");
    expect(s.status).toBe("pending");
    expect(await s.isReady()).toBe(false);
    await s._start();
    expect(s.status).toBe("running");
    expect(await s.isReady()).toBe(true);
    // The working directory is the sandbox's workspace unless the options name one.
    expect(s.workingDirectory).toMatch(/\/workspace$/);
    expect((await s.executeCommand("pwd")).stdout.trim()).toBe(s.workingDirectory);
  });

  it("fails fast with a clear error on a wrong token or an unreachable URL", async () => {
    const wrongToken = sandbox("mastra-token", { token: "not-the-token" });
    await expect(wrongToken._start()).rejects.toBeInstanceOf(SandboxAuthError);
    expect(wrongToken.status).toBe("error");

    // Nothing listens on port 1.
    const nobody = "http://127.0.0.1:1";
    const unreachable = sandbox("mastra-url", { url: nobody });
    const error = await unreachable._start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxConnectionError);
    expect((error as Error).message).toContain(nobody);
  });

  it("keeps files and running processes across stop and start, and finds the processes again", async ({ expect }) => {
    const s = sandbox("mastra-stop");
    await s._start();
    await s.executeCommand("sh", ["-c", "echo kept > notes.txt"]);
    const sleeper = await s.processes.spawn("echo started; sleep 30");
    await expect.poll(() => sleeper.stdout).toBe("started\n");

    await s._stop();
    expect(s.status).toBe("stopped");
    // Stopping lets go of the process; it goes on running in the sandbox.
    await expect(sleeper.wait()).rejects.toMatchObject({ code: "DETACHED" });

    await s._start();
    expect((await s.executeCommand("cat notes.txt")).stdout).toBe("kept\n");
    const again = await s.processes.get(sleeper.pid);
    expect(again).toBeDefined();
    expect(again!.exitCode).toBeUndefined();
    expect(again!.stdout).toBe("started\n");
    expect(await s.processes.kill(sleeper.pid)).toBe(true);
  });

  it("destroys the sandbox's container: its processes end, its files stay for the next start", async () => {
    const s = sandbox("mastra-destroy");
    await s._start();
    await s.executeCommand("echo data > file.txt");
    await s._destroy();
    expect(s.status).toBe("destroyed");
    await expect(s.executeCommand("true")).rejects.toThrow(/not ready/);

    const next = new EdgeSandbox({ ...httpConnection("unused"), sandboxId: s.id });
    made.push(next);
    expect((await next.executeCommand("cat file.txt")).stdout).toBe("data\n");
  });

  it("reports status and resources, and the service's instructions", async () => {
    const s = sandbox("mastra-info");
    expect((await s.getInfo()).status).toBe("pending");
    expect(s.getInstructions()).toContain(s.id);
    await s._start();
    const info = await s.getInfo();
    expect(info).toMatchObject({ id: s.id, name: "EdgeSandbox", provider: "edge", status: "running" });
    expect(info.resources?.memoryMB).toBeGreaterThan(0);
    expect(info.resources?.cpuCores).toBeGreaterThan(0);
    expect(info.metadata).toMatchObject({ workspace: s.workingDirectory, isolation: "none" });
    expect(s.getInstructions()).toContain(`Your working directory is ${s.workingDirectory}`);

    const replaced = sandbox("mastra-instr", { instructions: "Use the sandbox." });
    expect(replaced.getInstructions()).toBe("Use the sandbox.");
    const rewritten = sandbox("mastra-instr", { instructions: ({ defaultInstructions }) => `${defaultInstructions}\nBe brief.` });
    expect(rewritten.getInstructions()).toMatch(/\nBe brief\.$/);
  });
});

describe.concurrent("EdgeSandbox isolation", () => {
  it("maps isolation and nativeSandbox onto the sandbox's config", async () => {
    const s = sandbox("mastra-bwrap", { isolation: "bwrap", nativeSandbox: { allowNetwork: false, readOnlyPaths: ["/opt"] } });
    await s._start();
    const info = await s.getInfo();
    expect(info.metadata?.isolationConfig).toMatchObject({ mode: "bwrap", allowNetwork: false, readOnlyPaths: ["/opt"] });
    // The walls hold: the workspace is writable, the rest of the machine is not.
    expect((await s.executeCommand("touch ok && echo written")).stdout).toBe("written\n");
    const outside = await s.executeCommand("touch /usr/edge-sandbox-test");
    expect(outside.success).toBe(false);
    expect(outside.stderr).toMatch(/Read-only file system|Permission denied/);
  });

  it("refuses what it cannot honour, at construction or from the service at start", async () => {
    expect(() => new EdgeSandbox({ ...httpConnection("mastra-seatbelt"), isolation: "seatbelt" })).toThrow(IsolationUnavailableError);
    expect(() => new EdgeSandbox({ ...httpConnection("mastra-ro"), isolation: "bwrap", nativeSandbox: { readOnly: true } })).toThrow(
      SandboxUnsupportedFeatureError,
    );
    const relative = sandbox("mastra-relative", { isolation: "bwrap", nativeSandbox: { readWritePaths: ["data"] } });
    const error = await relative._start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as Error).message).toMatch(/absolute/);
    expect(relative.status).toBe("error");

    // The operator's walls: raw bwrap arguments are never the API caller's, host paths only from the allowlist.
    const refusals: [string, NativeSandboxConfig][] = [
      ["mastra-raw-args", { bwrapArgs: ["--ro-bind", "/", "/hostroot"] }],
      ["mastra-not-allowed", { readWritePaths: ["/srv"] }],
    ];
    for (const [name, nativeSandbox] of refusals) {
      const refused = sandbox(name, { isolation: "bwrap", nativeSandbox });
      const failure = await refused._start().catch((e: unknown) => e);
      expect(failure).toMatchObject({ code: "ISOLATION_NOT_ALLOWED" });
      expect(refused.status).toBe("error");
    }
  });

  it("detects the isolation the machine offers by asking the service", async () => {
    const detected = await EdgeSandbox.detectIsolation(httpConnection("mastra-detect"));
    expect(detected).toMatchObject({ backend: "bwrap", available: true });
    expect(detected.message).toMatch(/bubblewrap/);
  });
});
