/**
 * The container server as a program (`npm run container`, container/main.ts): it runs from its
 * bundle and from the sources, answers only to the secret it was given in its environment where no
 * runtime hands it one, its own environment keeps only what it reads (never the secrets it was
 * started with), and SIGTERM or close() ends open streams and every process tree.
 */
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SERVER_ENV_NAMES } from "../../container/boot/server-env.ts";
import { ENGINE_SERVER_SECRET_VAR } from "../../protocol/server-env-names.ts";
import { call, eventually, groupMembers, listeningUrl, startTestServer } from "./helpers.ts";

const MAIN = fileURLToPath(new URL("../../container/main.ts", import.meta.url));

async function runMain(env: Record<string, string>) {
  const workspace = mkdtempSync(join(tmpdir(), "sandbox-main-"));
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", WORKSPACE: workspace, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const listening = listeningUrl(child);
  const url = await listening.url;
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, url, workspace, exited, stderr: listening.stderr };
}

describe("npm run container (container/main.ts)", () => {
  it("runs from its bundle, serves, and on SIGTERM kills its processes and exits 0", async () => {
    const main = await runMain({});
    try {
      const cmdline = readFileSync(`/proc/${main.child.pid}/cmdline`, "utf8").split("\0");
      expect(cmdline.join(" ")).toMatch(/sandbox-container\/[0-9a-f]+\/container\/main\.js/);
      expect(cmdline).toContain("--max-semi-space-size=1"); // a lean server forks faster
      const ping = await call(main.url, "GET", "/api/ping");
      expect(ping.body).toMatchObject({ success: true, status: "ok" });
      const pwd = await call(main.url, "POST", "/api/execute", { command: "pwd" });
      expect(pwd.body.stdout.trim()).toBe(main.workspace);
      const started = await call(main.url, "POST", "/api/process/start", { command: "sleep 100 & sleep 100 & wait" });
      const pid: number = started.body.process.pid;
      expect(await eventually(() => groupMembers(pid).length === 3)).toBe(true);
      main.child.kill("SIGTERM");
      expect(await main.exited).toBe(0);
      expect(await eventually(() => groupMembers(pid).length === 0)).toBe(true);
      expect(main.stderr()).toBe("");
    } finally {
      main.child.kill("SIGKILL");
      rmSync(main.workspace, { recursive: true, force: true });
    }
  });

  it("can run straight from the TypeScript sources", async () => {
    const main = await runMain({ SANDBOX_BUNDLE: "0" });
    try {
      expect(readFileSync(`/proc/${main.child.pid}/cmdline`, "utf8")).toContain("container/main.ts");
      expect((await call(main.url, "GET", "/api/ping")).status).toBe(200);
    } finally {
      main.child.kill("SIGTERM");
      await main.exited;
      rmSync(main.workspace, { recursive: true, force: true });
    }
  });
});

describe("the secret its Durable Object gave in the container's environment (as on Cloudflare)", () => {
  for (const [how, extra] of [["bundled", {}], ["as the image starts it", { SANDBOX_IMAGE_ENV: "1" }]] as const) {
    it(`is the only one it answers to, and no command sees it (${how})`, async () => {
      const secret = "engine-server-secret-0123456789";
      const main = await runMain({ [ENGINE_SERVER_SECRET_VAR]: secret, ...extra });
      try {
        expect((await call(main.url, "GET", "/api/ping")).status).toBe(401);
        expect((await call(main.url, "GET", "/api/ping", undefined, "not-the-secret")).status).toBe(401);
        const reply = await call(main.url, "POST", "/api/execute", { command: `echo "\${${ENGINE_SERVER_SECRET_VAR}:-unset}"` }, secret);
        expect(reply.body.stdout).toBe("unset\n");
      } finally {
        main.child.kill("SIGTERM");
        await main.exited;
        rmSync(main.workspace, { recursive: true, force: true });
      }
    });
  }
});

describe("the server's own environment", () => {
  const secrets = { SECRET_TOKEN: "s3cret-token-value", SANDBOX_API_TOKEN: "s3cret-api-token", AWS_SECRET_ACCESS_KEY: "s3cret-aws" };

  for (const [how, extra] of [["bundled", {}], ["from the sources", { SANDBOX_BUNDLE: "0" }]] as const) {
    it(`holds only what the server reads, not the secrets it was started with (${how})`, async () => {
      const home = mkdtempSync(join(tmpdir(), "sandbox-home-"));
      const main = await runMain({ ...secrets, ...extra, SANDBOX_HOME: home });
      try {
        // A command (same user, no isolation) reads its parent's environ: the parent is the server.
        const reply = await call(main.url, "POST", "/api/execute", { command: "echo $PPID; echo $HOME; tr '\\0' '\\n' < /proc/$PPID/environ" });
        const [ppid, commandHome, ...environ] = (reply.body.stdout as string).trim().split("\n");
        expect(Number(ppid)).toBe(main.child.pid);
        expect(environ).toContain(`WORKSPACE=${main.workspace}`);
        expect(environ).toContain(`SANDBOX_HOME=${home}`);
        expect(reply.body.stdout).not.toContain("s3cret");
        expect(environ.map((line) => line.slice(0, line.indexOf("="))).filter((name) => !SERVER_ENV_NAMES.has(name))).toEqual([]);
        // What the server needs still reaches it: SANDBOX_HOME became the commands' HOME.
        expect(commandHome).toBe(home);
        expect(readFileSync(`/proc/${main.child.pid}/environ`, "utf8")).not.toContain("s3cret");
        expect(main.stderr()).toBe("");
      } finally {
        main.child.kill("SIGTERM");
        await main.exited;
        rmSync(main.workspace, { recursive: true, force: true });
        rmSync(home, { recursive: true, force: true });
      }
    });
  }
});

describe("startServer().close()", () => {
  it("ends open streams and kills every process tree", async () => {
    const t = await startTestServer();
    const started = await call(t.url, "POST", "/api/process/start", { command: "sleep 100 & sleep 100 & wait" });
    const pid: number = started.body.process.pid;
    const stream = await fetch(`${t.url}/api/process/${started.body.process.id}/stream`);
    const reading = stream.text().catch(() => "closed");
    await t.close();
    await reading; // the stream ended instead of hanging
    expect(await eventually(() => groupMembers(pid).length === 0)).toBe(true);
  });
});
