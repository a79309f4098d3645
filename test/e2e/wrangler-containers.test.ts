/**
 * `wrangler dev` with containers on, pointed at the local runtime's Docker engine and its docker
 * stand-in (scripts/docker-cli/): wrangler checks, "builds" and pulls through the stand-in, workerd
 * runs a Durable Object's container through the engine, and the object's own `ctx.container`
 * starts it, reaches its server, signals, monitors and destroys it. At wrangler's exit its cleanup
 * (docker ps / rm) leaves no container. Then the drift check: every call the installed wrangler and
 * workerd made, to the engine and to the stand-in, was one they serve; a failure names each one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../runtime/ports.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { detectIsolation } from "../../server-kit/detect-isolation.ts";
import { WORKER_SOURCE } from "../runtime/workerd-container-worker.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const SECRET = "wrangler-engine-test-secret-0123456789";

let project: string;
let runtime: RunningRuntime;
let wrangler: ChildProcess;
let output = "";
let url: string;

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "wrangler-containers-"));
  // Sandbox containers run as other host users: they pass through (never list) it to their own folder.
  chmodSync(project, 0o711);
  runtime = await startRuntime({ dataDir: join(project, "sandboxes"), isolation: detectIsolation().bwrap.available ? "bwrap" : "none", stopGraceMs: 2_000 });
  writeFileSync(join(project, "worker.js"), WORKER_SOURCE);
  writeFileSync(
    join(project, "wrangler.toml"),
    [
      'name = "engine-check"',
      'main = "worker.js"',
      'compatibility_date = "2026-10-20"',
      "[[durable_objects.bindings]]",
      'name = "BOX"',
      'class_name = "Box"',
      "[[migrations]]",
      'tag = "v1"',
      'new_sqlite_classes = ["Box"]',
      "[[containers]]",
      'class_name = "Box"',
      `image = ${JSON.stringify(join(root, "container/Dockerfile"))}`,
      `image_build_context = ${JSON.stringify(root)}`,
      "[dev]",
      "enable_containers = true",
    ].join("\n"),
  );
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  wrangler = spawn(process.execPath, [join(root, "node_modules/wrangler/bin/wrangler.js"), "dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", join(project, "state")], {
    cwd: project,
    env: {
      ...process.env,
      WRANGLER_DOCKER_HOST: runtime.engine.url,
      WRANGLER_DOCKER_BIN: join(root, "scripts/docker-cli/docker"),
      SANDBOX_NODE: process.execPath,
      WRANGLER_SEND_METRICS: "false",
      CI: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  wrangler.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  wrangler.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  const deadline = Date.now() + 90_000;
  while (!output.includes("Ready on")) {
    if (wrangler.exitCode !== null || Date.now() > deadline) throw new Error(`wrangler dev did not get ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 120_000);

afterAll(async () => {
  if (wrangler && wrangler.exitCode === null) {
    wrangler.kill("SIGKILL");
    await once(wrangler, "exit");
  }
  await runtime?.close();
  rmSync(project, { recursive: true, force: true });
});

async function op(name: string, query: Record<string, string> = {}, body?: unknown): Promise<any> {
  const search = new URLSearchParams({ secret: SECRET, ...query });
  const response = await fetch(`${url}/${name}?${search}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text);
}

describe("wrangler dev with containers on, through the runtime's engine and docker stand-in", () => {
  it("prepared the image and the egress sidecar through the stand-in", () => {
    expect(output).toContain("the local runtime's own container");
    expect(output).toContain("the egress sidecar is served by the local runtime");
    expect(output).not.toContain("warning: this Dockerfile is not the project's");
  });

  it("runs the Durable Object's container: start, exec through getTcpPort, signal, monitor, destroy", async () => {
    expect(await op("state")).toEqual({ present: true, running: false });
    expect(await op("start", { greeting: "from-wrangler" })).toEqual({ running: true });
    const exec = await op("exec", {}, { command: "echo $GREETING" });
    expect(exec).toMatchObject({ exitCode: 0, stdout: "from-wrangler\n" });
    expect(await op("signal", { signo: "15" })).toEqual({ signalled: true });
    expect(await op("monitor")).toEqual({ monitor: "exited 0", running: false });
    expect(await op("start", { greeting: "second" })).toEqual({ running: true });
    expect(await op("exec", {}, { command: "echo $GREETING" })).toMatchObject({ stdout: "second\n" });
    expect(runtime.engine.engine.list().map((c) => c.status)).toEqual(["running", "running"]);
  });

  it("leaves no container once wrangler exits", async () => {
    wrangler.kill("SIGINT");
    await once(wrangler, "exit");
    const deadline = Date.now() + 20_000;
    while (runtime.engine.engine.list().some((c) => !c.sidecar) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(runtime.engine.engine.list().filter((c) => !c.sidecar)).toEqual([]);
  });

  it("was called only in ways the engine and the stand-in serve (an upgrade that calls something new fails here, naming it)", () => {
    const engine = runtime.engine.unserved.map((call) => `${call.method} ${call.path}`);
    expect(engine, `the Docker engine did not serve: ${engine.join(", ")}`).toEqual([]);
    const log = join(runtime.dataDir, ".docker-engine", "cli-unserved.log");
    const cli = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
    expect(cli, `the docker stand-in did not serve: ${cli.join("\n")}`).toEqual([]);
  });
});
