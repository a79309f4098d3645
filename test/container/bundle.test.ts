/**
 * The server's bundle (container/boot/bundle.ts), what the image ships and the local runtime runs:
 * it holds the server (of zod only the parts it uses), the files the server reads at run time and, of packages, only the PTY library
 * with its native binary; and it runs alone, copied away from the checkout (no node_modules above it
 * to fall back on): commands, an archive (extracted in a worker thread of the bundle's), a Python
 * context whose driver is the copy's, a terminal, and the
 * terminal's WebSocket (the part of the server loaded on first use). Its start script, the image's
 * command, starts Node once, on the image's environment.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXTRACT_WORKER_ENTRY } from "../../container/archive/extract-off-loop.ts";
import { bundleServer } from "../../container/boot/bundle.ts";
import { BUNDLE_ENTRY, BUNDLE_SNAPSHOT, BUNDLE_START_SCRIPT } from "../../server-kit/bundle-layout.ts";
import { IMAGE_ENV_VAR } from "../../protocol/runtime.ts";
import { SERVER_ASSETS } from "../../container/server-assets.ts";
import { CODE_ROUTES } from "../../protocol/code.ts";
import { INFO_ROUTES } from "../../protocol/info.ts";
import { EXEC_ROUTES } from "../../protocol/process.ts";
import { TERMINAL_ROUTES } from "../../protocol/terminals.ts";
import { SESSION_ROUTES } from "../../protocol/sessions.ts";
import { ARCHIVE_ROUTES } from "../../protocol/archive.ts";
import { gzippedZeros, rawArchive } from "./archive-helpers.ts";
import { call, listeningUrl } from "./helpers.ts";

/** Starts a bundled server and waits for the line saying where it listens. */
async function startBundled(program: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
  const child = spawn(program, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await listeningUrl(child).url;
  return { child, url, exited };
}

let bundle: string;
beforeAll(async () => {
  bundle = await bundleServer();
}, 60_000);

describe("the server's bundle", () => {
  it("keeps of zod only what the server uses (zod's JSON Schema reader, which it never calls, is left out)", () => {
    // zod's `z` object holds all of zod: a module importing it instead of the namespace brings every part back.
    const code = readdirSync(join(bundle, "container")).filter((name) => name.endsWith(".js")).map((name) => readFileSync(join(bundle, "container", name), "utf8"));
    expect(code.some((text) => text.includes("ZodType"))).toBe(true);
    expect(code.filter((text) => text.includes("function fromJSONSchema("))).toEqual([]);
  });

  it("holds the server, the files it reads at run time, and of packages the PTY library alone", () => {
    expect(JSON.parse(readFileSync(join(bundle, "package.json"), "utf8"))).toMatchObject({ type: "module", version: expect.any(String) });
    expect(existsSync(join(bundle, BUNDLE_ENTRY))).toBe(true);
    expect(existsSync(join(bundle, BUNDLE_SNAPSHOT))).toBe(true);
    expect(existsSync(join(bundle, "container", `${EXTRACT_WORKER_ENTRY}.js`))).toBe(true);
    for (const asset of Object.values(SERVER_ASSETS)) expect(existsSync(join(bundle, "container", asset)), asset).toBe(true);
    expect(readdirSync(join(bundle, "node_modules"))).toEqual(["@lydell"]);
    expect(readdirSync(join(bundle, "node_modules", "@lydell")).join(" ")).toMatch(/^node-pty node-pty-linux-\w+$/);
    // What is bundled in carries its license along.
    const licenses = readFileSync(join(bundle, "container", "THIRD-PARTY-LICENSES.txt"), "utf8");
    for (const name of ["zod", "ws", "tar"]) expect(licenses).toMatch(new RegExp(`^${name}@\\d`, "m"));
  });

  describe("its start script (the image's command)", () => {
    const workspace = () => mkdtempSync(join(tmpdir(), "sandbox-start-"));
    const nodeDir = dirname(process.execPath);
    const start = async (env: Record<string, string>) => {
      const dir = workspace();
      const base = { PATH: `${nodeDir}:/usr/bin:/bin`, PORT: "0", HOST: "127.0.0.1", WORKSPACE: dir, SANDBOX_WARM_CODE: "none" };
      return { dir, ...(await startBundled(join(bundle, BUNDLE_START_SCRIPT), [], { cwd: dir, env: { ...base, ...env } })) };
    };

    it("starts Node once, from the server's snapshot, on the image's environment: commands get it, less the server's own variables", async () => {
      const home = "/tmp/a home\nwith a newline";
      const { dir, child, url, exited } = await start({ IMAGE_VARIABLE: "from the image", SANDBOX_HOME: home, SANDBOX_PYTHON: "" });
      try {
        // The script's own pid is the server's: the shell became Node, which did not re-execute itself.
        const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0");
        expect(cmdline.slice(1, 5)).toEqual(["--max-semi-space-size=1", "--snapshot-blob", join(bundle, BUNDLE_SNAPSHOT), join(bundle, BUNDLE_ENTRY)]);
        const environ = readFileSync(`/proc/${child.pid}/environ`, "utf8").split("\0").filter(Boolean);
        expect(environ).toEqual(expect.arrayContaining([`SANDBOX_HOME=${home}`, "SANDBOX_PYTHON=", `WORKSPACE=${dir}`, "IMAGE_VARIABLE=from the image", `${IMAGE_ENV_VAR}=1`]));
        expect((await call(url, "POST", EXEC_ROUTES.execute, { command: 'printf %s "$HOME"' })).body.stdout).toBe(home);
        const seen = await call(url, "POST", EXEC_ROUTES.execute, { command: 'printf "%s|%s|%s" "$IMAGE_VARIABLE" "${WORKSPACE-unset}" "${SANDBOX_PYTHON-unset}"' });
        expect(seen.body.stdout).toBe("from the image|unset|unset");
      } finally {
        child.kill("SIGTERM");
        expect(await exited).toBe(0);
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("leaves the semi-space size to NODE_OPTIONS when that sets it", async () => {
      const { dir, child, exited } = await start({ NODE_OPTIONS: "--max-semi-space-size=4" });
      try {
        expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0").slice(1, 4)).toEqual(["--snapshot-blob", join(bundle, BUNDLE_SNAPSHOT), join(bundle, BUNDLE_ENTRY)]);
        expect(readFileSync(`/proc/${child.pid}/environ`, "utf8")).toContain("NODE_OPTIONS=--max-semi-space-size=4");
      } finally {
        child.kill("SIGTERM");
        await exited;
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  // Both ways a bundle starts: main.js (the local runtime's way; a variable the server does not read
  // makes it re-execute itself once, as in the image) and the start script, from the snapshot made
  // where the bundle was: every path the server uses is found where the copy lies.
  describe.each([
    { how: "main.js", fromSnapshot: false },
    { how: "its start script", fromSnapshot: true },
  ])("copied away from the checkout, started by $how", ({ fromSnapshot }) => {
    let dir: string;
    let url: string;
    let child: ReturnType<typeof spawn>;
    let exited: Promise<number | null>;

    beforeAll(async () => {
      dir = realpathSync(mkdtempSync(join(tmpdir(), "sandbox-bundle-")));
      cpSync(bundle, join(dir, "app"), { recursive: true });
      const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, PORT: "0", HOST: "127.0.0.1", WORKSPACE: join(dir, "workspace"), SANDBOX_WARM_CODE: "none", UNREAD_VARIABLE: "x" };
      const started = fromSnapshot ? startBundled(join(dir, "app", BUNDLE_START_SCRIPT), [], { cwd: dir, env }) : startBundled(process.execPath, [join(dir, "app", BUNDLE_ENTRY)], { cwd: dir, env });
      ({ child, url, exited } = await started);
    }, 60_000);

    afterAll(async () => {
      child?.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    });

    it.skipIf(fromSnapshot)("re-executed itself once with only the variables it reads, and its Node flags", () => {
      expect(readFileSync(`/proc/${child.pid}/environ`, "utf8")).not.toContain("UNREAD_VARIABLE");
      expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0")).toContain("--max-semi-space-size=1");
    });

    it.runIf(fromSnapshot)("runs from the copy's snapshot", () => {
      expect(readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0")).toContain(join(dir, "app", BUNDLE_SNAPSHOT));
    });

    // A snapshot freezes whatever its program computed: no id, secret or random draw may be among it,
    // or every container of the image would share them.
    it.runIf(fromSnapshot)("draws its ids afresh in every process started from the one snapshot", async () => {
      const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, PORT: "0", HOST: "127.0.0.1", WORKSPACE: join(dir, "workspace-2"), SANDBOX_WARM_CODE: "none" };
      const second = await startBundled(join(dir, "app", BUNDLE_START_SCRIPT), [], { cwd: dir, env });
      try {
        const ids = async (at: string) => ({
          instance: (await call(at, "GET", INFO_ROUTES.ping)).body.instanceId as string,
          process: (await call(at, "POST", EXEC_ROUTES.execute, { command: "true" })).body.processId as string,
          session: (await call(at, "POST", SESSION_ROUTES.create, {})).body.session?.id as string,
        });
        const [first, other] = [await ids(url), await ids(second.url)];
        for (const kind of ["instance", "process", "session"] as const) {
          expect(first[kind], kind).toMatch(/\w{8}/);
          expect(other[kind], kind).not.toBe(first[kind]);
        }
      } finally {
        second.child.kill("SIGTERM");
        await second.exited;
      }
    });

    it("serves commands, refuses bad input in English, and reports the bundle's version", async () => {
      expect((await call(url, "POST", EXEC_ROUTES.execute, { command: "echo bundled" })).body).toMatchObject({ exitCode: 0, stdout: "bundled\n" });
      // Bad input is told in zod's English, the one locale the bundle keeps.
      const refused = await call(url, "POST", EXEC_ROUTES.execute, { command: 5 });
      expect(refused.body).toMatchObject({ code: "INVALID_REQUEST", message: "Invalid request: command: Invalid input: expected string, received number" });
      const version = JSON.parse(readFileSync(join(dir, "app", "package.json"), "utf8")).version;
      expect((await call(url, "GET", INFO_ROUTES.info)).body).toMatchObject({ version });
    });

    it("extracts an archive in the worker thread beside the bundle, and refuses a gzip bomb with its code", async () => {
      const archive = rawArchive([{ path: "from-archive.txt", type: "File", body: "unpacked\n" }]);
      const extracted = await fetch(`${url}${ARCHIVE_ROUTES.extract}`, { method: "PUT", body: new Uint8Array(archive) });
      expect(await extracted.json()).toMatchObject({ entries: 1 });
      expect(readFileSync(join(dir, "workspace", "from-archive.txt"), "utf8")).toBe("unpacked\n");
      const bomb = await fetch(`${url}${ARCHIVE_ROUTES.extract}`, { method: "PUT", body: new Uint8Array(gzippedZeros(256 * 1024 * 1024)) });
      expect(await bomb.json()).toMatchObject({ code: "INVALID_ARCHIVE" });
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
