/**
 * The server's bundle (container/boot/bundle.ts), what the image ships and the local runtime runs:
 * it holds the server, the files the server reads at run time and, of packages, only the PTY library
 * with its native binary; and it runs alone, copied away from the checkout (no node_modules above it
 * to fall back on): commands, a Python context whose driver is the copy's, a terminal, and the
 * terminal's WebSocket (the part of the server loaded on first use).
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_ENTRY, bundleServer } from "../../container/boot/bundle.ts";
import { SERVER_ASSETS } from "../../container/server-assets.ts";
import { CODE_ROUTES } from "../../protocol/code.ts";
import { INFO_ROUTES } from "../../protocol/info.ts";
import { EXEC_ROUTES } from "../../protocol/process.ts";
import { TERMINAL_ROUTES } from "../../protocol/terminals.ts";
import { call } from "./helpers.ts";

let bundle: string;
beforeAll(async () => {
  bundle = await bundleServer();
}, 60_000);

describe("the server's bundle", () => {
  it("holds the server, the files it reads at run time, and of packages the PTY library alone", () => {
    expect(JSON.parse(readFileSync(join(bundle, "package.json"), "utf8"))).toMatchObject({ type: "module", version: expect.any(String) });
    expect(existsSync(join(bundle, BUNDLE_ENTRY))).toBe(true);
    for (const asset of Object.values(SERVER_ASSETS)) expect(existsSync(join(bundle, "container", asset)), asset).toBe(true);
    expect(readdirSync(join(bundle, "node_modules"))).toEqual(["@lydell"]);
    expect(readdirSync(join(bundle, "node_modules", "@lydell")).join(" ")).toMatch(/^node-pty node-pty-linux-\w+$/);
    // What is bundled in carries its license along.
    const licenses = readFileSync(join(bundle, "container", "THIRD-PARTY-LICENSES.txt"), "utf8");
    for (const name of ["zod", "ws", "tar"]) expect(licenses).toMatch(new RegExp(`^${name}@\\d`, "m"));
  });

  describe("copied away from the checkout", () => {
    let dir: string;
    let url: string;
    let child: ReturnType<typeof spawn>;
    let exited: Promise<number | null>;

    beforeAll(async () => {
      dir = realpathSync(mkdtempSync(join(tmpdir(), "sandbox-bundle-")));
      cpSync(bundle, join(dir, "app"), { recursive: true });
      // A variable the server does not read: it re-executes itself once, as in the image.
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: "0", HOST: "127.0.0.1", WORKSPACE: join(dir, "workspace"), SANDBOX_WARM_CODE: "none", UNREAD_VARIABLE: "x" };
      child = spawn(process.execPath, [join(dir, "app", BUNDLE_ENTRY)], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
      exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
      let stderr = "";
      child.stderr!.on("data", (chunk) => (stderr += chunk));
      url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout!.on("data", (chunk) => {
          out += chunk;
          const match = /listening on (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]!);
        });
        child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
    }, 60_000);

    afterAll(async () => {
      child?.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    });

    it("serves commands and reports the bundle's version", async () => {
      expect((await call(url, "POST", EXEC_ROUTES.execute, { command: "echo bundled" })).body).toMatchObject({ exitCode: 0, stdout: "bundled\n" });
      const version = JSON.parse(readFileSync(join(dir, "app", "package.json"), "utf8")).version;
      expect((await call(url, "GET", INFO_ROUTES.info)).body).toMatchObject({ version });
    });

    it("runs a Python context from the copy's driver", async () => {
      const created = await call(url, "POST", CODE_ROUTES.contexts, { language: "python" });
      expect(created.status).toBe(200);
      const code = "import sys\nsys.orig_argv[1], 6 * 7";
      const ran = await call(url, "POST", CODE_ROUTES.run, { contextId: created.body.context.id, code });
      const driver = join(dir, "app", "container", SERVER_ASSETS.pythonDriver);
      expect(ran.body.results).toEqual([{ text: `('${driver}', 42)`, isMainResult: true }]);
    });

    it("runs a terminal (the PTY library's binary beside the bundle) and shows it over its WebSocket", async () => {
      const created = await call(url, "POST", TERMINAL_ROUTES.list, { command: "read line; echo got-$line", cols: 80, rows: 24 });
      expect(created.status).toBe(200);
      const id = created.body.terminal.id as string;
      const socket = new WebSocket(`${url.replace("http", "ws")}${TERMINAL_ROUTES.ws(id, 0)}`);
      socket.binaryType = "arraybuffer";
      let seen = "";
      const echoed = new Promise<void>((resolve, reject) => {
        socket.addEventListener("message", (event) => {
          if (typeof event.data !== "string") seen += Buffer.from(event.data as ArrayBuffer).toString("utf8");
          if (seen.includes("got-bundle")) resolve();
        });
        socket.addEventListener("error", () => reject(new Error("the terminal's WebSocket failed")));
      });
      await new Promise((resolve) => socket.addEventListener("open", resolve, { once: true }));
      expect((await call(url, "POST", TERMINAL_ROUTES.write(id), { data: "bundle\n" })).status).toBe(200);
      await echoed;
      socket.close();
      expect((await call(url, "GET", TERMINAL_ROUTES.wait(id))).body.terminal).toMatchObject({ status: "exited", exitCode: 0 });
    });
  });
});
