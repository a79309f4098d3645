/**
 * Cloudflare's whole-workflow cases (their smoke test, build-test, comprehensive and keepAlive
 * workflows), ported to getSandbox: a developer's round of clone → env → files → process, streamed
 * output, per-command env and cwd, binary files, background processes, absolute paths outside
 * /workspace, `exit` in the default session, and the keepAlive option.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { GetSandboxOptions } from "../../src/client/get-sandbox.ts";
import { cloudflareSandboxes } from "./cloudflare-suite.ts";

const sandboxes = cloudflareSandboxes();
afterAll(() => sandboxes.destroyAll());

const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("smoke", () => {
  it("a sandbox answers", async () => {
    const sandbox = sandboxes.create("cf-smoke");
    expect(await sandbox.exec("echo ok")).toMatchObject({ success: true, exitCode: 0, stdout: "ok\n" });
  });
});

describe("build and test workflow", () => {
  const sandbox = sandboxes.create("cf-build");

  it("runs commands and file operations, on absolute paths anywhere", async () => {
    expect(await sandbox.exec('echo "Hello from sandbox"')).toMatchObject({ exitCode: 0, stdout: expect.stringContaining("Hello from sandbox") });
    await sandbox.writeFile("/test-file.txt", "Integration test content");
    expect((await sandbox.readFile("/test-file.txt")).content).toBe("Integration test content");
    expect((await sandbox.exec("pwd")).stdout).toMatch(/\/workspace/);
  });

  // Cloudflare's session shell dies on `exit` (SESSION_TERMINATED, 410); ours ends that command only.
  it("`exit 1` ends that command with exit code 1", async () => {
    expect(await sandbox.exec("exit 1")).toMatchObject({ success: false, exitCode: 1 });
    expect((await sandbox.exec("echo still-here")).stdout).toBe("still-here\n");
  });
});

describe("comprehensive workflow", () => {
  const sandbox = sandboxes.create("cf-comprehensive");
  const dir = "/workspace/hello-world";

  it("clone → env → files → process", async () => {
    const made = await sandbox.exec(
      "(mkdir -p /tmp/origins && cd /tmp/origins && git init -q -b master hello && cd hello && echo 'Hello World!' > README && git add README && git -c user.name=t -c user.email=t@example.com commit -q -m first)",
    );
    expect(made.exitCode).toBe(0);
    await sandbox.setEnvVars({ PROJECT_NAME: "hello-world", BUILD_ENV: "test" });

    await sandbox.gitCheckout("file:///tmp/origins/hello", { targetDir: dir });
    expect((await sandbox.listFiles(dir)).files.some((f) => f.name === "README")).toBe(true);
    expect((await sandbox.readFile(`${dir}/README`)).content).toContain("Hello");

    await sandbox.mkdir(`${dir}/src/utils`, { recursive: true });
    await sandbox.writeFile(`${dir}/config.json`, JSON.stringify({ name: "hello-world", version: "1.0.0" }, null, 2));
    await sandbox.writeFile(`${dir}/src/utils/greet.js`, "export function greet(name) { return `Hello, ${name}!`; }\n");
    await sandbox.renameFile(`${dir}/src/utils/greet.js`, `${dir}/src/utils/greeter.js`);
    expect((await sandbox.readFile(`${dir}/src/utils/greeter.js`)).content).toContain("greet");

    const build = await sandbox.exec(`echo "Building $PROJECT_NAME in $BUILD_ENV mode" && ls -la ${dir}/src`);
    expect(build.stdout).toContain("Building hello-world in test mode");
    expect(build.stdout).toContain("utils");
    const status = await sandbox.exec("git status --porcelain", { cwd: dir });
    expect(status.stdout).toContain("config.json");
    expect(status.stdout).toContain("src/");

    await sandbox.writeFile(
      `${dir}/server.js`,
      [
        "console.log('PROJECT_NAME = ' + process.env.PROJECT_NAME);",
        "console.log('BUILD_ENV = ' + process.env.BUILD_ENV);",
        "let beats = 0;",
        "const timer = setInterval(() => { console.log('Heartbeat ' + ++beats); if (beats === 3) { clearInterval(timer); console.log('Done'); } }, 100);",
      ].join("\n"),
    );
    const process = await sandbox.startProcess(`node ${dir}/server.js`);
    await process.waitForLog("Done", 10_000);
    const logs = await sandbox.getProcessLogs(process.id);
    for (const line of ["PROJECT_NAME = hello-world", "BUILD_ENV = test", "Heartbeat 3", "Done"]) expect(logs.stdout).toContain(line);

    await sandbox.mkdir(`${dir}/backup`, { recursive: true });
    await sandbox.moveFile(`${dir}/config.json`, `${dir}/backup/config.json`);
    await sandbox.deleteFile(`${dir}/server.js`);
    const names = (await sandbox.listFiles(dir, { recursive: true })).files.map((f) => f.relativePath);
    expect(names).toContain("backup/config.json");
    expect(names).not.toContain("server.js");
    expect(names).toContain("src/utils/greeter.js");
  });

  it("streams command output as it comes", async () => {
    await sandbox.setEnvVars({ PROJECT_NAME: "hello-world" });
    const types = new Set<string>();
    let output = "";
    let exitCode: number | undefined;
    for await (const event of sandbox.execStream('for i in 1 2 3; do echo "[$PROJECT_NAME] Step $i"; sleep 0.1; done')) {
      types.add(event.type);
      if (event.type === "stdout") output += event.data;
      if (event.type === "complete") exitCode = event.exitCode;
    }
    expect([...types]).toEqual(expect.arrayContaining(["start", "stdout", "complete"]));
    expect(output).toContain("[hello-world]");
    expect(output).toContain("Step 1");
    expect(output).toContain("Step 3");
    expect(exitCode).toBe(0);
  });

  it("takes per-command env and cwd without changing the session", async () => {
    await sandbox.setEnvVars({ PROJECT_NAME: "hello-world" });
    expect((await sandbox.exec('echo "TEMP=$TEMP_VAR, PROJECT=$PROJECT_NAME"', { env: { TEMP_VAR: "temporary-value" } })).stdout.trim()).toBe("TEMP=temporary-value, PROJECT=hello-world");
    expect((await sandbox.exec('echo "TEMP=$TEMP_VAR"')).stdout.trim()).toBe("TEMP=");
    expect((await sandbox.exec("pwd", { cwd: "/tmp" })).stdout.trim()).toBe("/tmp");
    expect((await sandbox.exec("pwd")).stdout.trim()).toBe("/workspace");
  });

  it("reads a binary file written by a command", async () => {
    await sandbox.exec(`echo '${PNG_BASE64}' | base64 -d > /workspace/test-image.png`);
    const file = await sandbox.readFile("/workspace/test-image.png");
    expect(file).toMatchObject({ isBinary: true, encoding: "base64", mimeType: expect.stringMatching(/image\/png/) });
    expect(file.content).toBeTruthy();
    await sandbox.deleteFile("/workspace/test-image.png");
  });

  it("manages several background processes", async () => {
    const one = await sandbox.startProcess("sleep 30");
    const two = await sandbox.startProcess("sleep 30");
    const ids = (await sandbox.listProcesses()).map((p) => p.id);
    expect(ids).toEqual(expect.arrayContaining([one.id, two.id]));
    await sandbox.killAllProcesses();
    await Promise.all([one.waitForExit(10_000), two.waitForExit(10_000)]);
    expect((await sandbox.listProcesses()).filter((p) => p.status === "running")).toHaveLength(0);
  });
});

describe("keepAlive", () => {
  const sandbox = sandboxes.create("cf-keepalive", { keepAlive: true } as GetSandboxOptions);

  it("runs commands with keepAlive", async () => {
    expect((await sandbox.exec('echo "keepAlive command 1"')).stdout).toContain("keepAlive command 1");
    expect((await sandbox.exec('echo "keepAlive command 2"')).stdout).toContain("keepAlive command 2");
  });

  it("runs background processes with keepAlive", async () => {
    const process = await sandbox.startProcess("sleep 10");
    expect(process.id).toBeTruthy();
    expect(await process.getStatus()).toBe("running");
    await sandbox.killProcess(process.id);
  });

  it("works with file operations with keepAlive", async () => {
    await sandbox.writeFile("/workspace/keepalive-test.txt", "keepAlive file content");
    expect((await sandbox.readFile("/workspace/keepalive-test.txt")).content).toBe("keepAlive file content");
    await sandbox.deleteFile("/workspace/keepalive-test.txt");
  });
});
