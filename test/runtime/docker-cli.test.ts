/**
 * The docker command wrangler runs (scripts/docker-cli/), against a real runtime's engine: the calls
 * wrangler makes answer as wrangler reads them (exit codes and stdout), the cleanup at exit removes
 * the containers of a tag, and anything it does not serve is refused, named on stderr and logged for
 * the drift check; a refusal that is an answer (an unknown image) is not logged.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINE_SERVER_SECRET_VAR } from "../../protocol/runtime.ts";
import { startRuntime, type RunningRuntime } from "../../runtime/server.ts";
import { engineCall } from "./docker-engine-client.ts";
import { tempDataDir, type DataDir } from "./helpers.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const DOCKER = join(root, "scripts/docker-cli/docker");
const TAG = "cloudflare-dev/box:cli-test";

let dataDir: DataDir;
let runtime: RunningRuntime;
beforeAll(async () => {
  dataDir = tempDataDir();
  runtime = await startRuntime({ dataDir: dataDir.path, isolation: "none", stopGraceMs: 1_000 });
});
afterAll(async () => {
  await runtime?.close();
  dataDir.remove();
});

async function docker(args: string[], options: { stdin?: string; host?: string | null } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), SANDBOX_NODE: process.execPath };
  delete env.DOCKER_HOST;
  if (options.host !== null) env.WRANGLER_DOCKER_HOST = options.host ?? runtime.engine.url;
  else delete env.WRANGLER_DOCKER_HOST;
  const child = spawn(DOCKER, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  child.stdin.end(options.stdin ?? "");
  const code = await new Promise<number>((resolve) => child.once("close", (exit) => resolve(exit ?? -1)));
  return { code, stdout, stderr };
}

const unservedLog = () => {
  const path = join(runtime.dataDir, ".docker-engine", "cli-unserved.log");
  return existsSync(path) ? readFileSync(path, "utf8") : "";
};

describe("the docker stand-in for wrangler", () => {
  it("answers info as wrangler and Miniflare read it, and names what to start when the engine is down", async () => {
    expect((await docker(["info"])).code).toBe(0);
    expect(await docker(["--host", runtime.engine.url, "info", "--format", "{{json .SecurityOptions}}"], { host: null })).toMatchObject({ code: 0, stdout: "[]\n" });
    const down = await docker(["info"], { host: "unix:///nonexistent/docker.sock" });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("npm start");
  });

  it("builds as the runtime's own container, inspects, and untags", async () => {
    const dockerfile = readFileSync(join(root, "container/Dockerfile"), "utf8");
    const built = await docker(["build", "--load", "-t", TAG, "--platform", "linux/amd64", "--provenance=false", "-f", "-", root], { stdin: dockerfile });
    expect(built.code, built.stderr).toBe(0);
    expect(built.stdout).toContain(TAG);
    expect(built.stdout).not.toContain("warning");
    expect((await docker(["build", "-t", "other:1", "-f", "-", root], { stdin: "FROM alpine\n" })).stdout).toContain("warning: this Dockerfile is not the project's");
    expect(await docker(["image", "inspect", TAG, "--format", "{{ range .RepoTags }}{{ . }}\n{{ end }}"])).toMatchObject({ code: 0, stdout: `${TAG}\n` });
    expect(await docker(["image", "inspect", TAG, "--format", "{{ len .Config.ExposedPorts }}"])).toMatchObject({ code: 0, stdout: "1\n" });
    expect((await docker(["rmi", TAG, "other:1"])).code).toBe(0);
    const gone = await docker(["image", "inspect", TAG, "--format", "{{ len .Config.ExposedPorts }}"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("No such image");
    expect(unservedLog()).toBe("");
  });

  it("pulls the egress image (served by the runtime) and nothing else", async () => {
    expect((await docker(["pull", "cloudflare/proxy-everything:3cb1195@sha256:0ef6716c52430096900b150d84a3302057d6cd2319dae7987128c85d0733e3c8"])).code).toBe(0);
    const other = await docker(["pull", "alpine:3", "--platform", "linux/amd64"]);
    expect(other.code).toBe(1);
    expect(unservedLog()).toContain('"pull","alpine:3"');
  });

  it("finds and removes a tag's containers at exit, as wrangler's cleanup does", async () => {
    for (const name of ["cli-a", "cli-b"]) expect((await engineCall(runtime.engine.path, "POST", `/containers/create?name=${name}`, { Image: name === "cli-a" ? TAG : "another", Env: [`${ENGINE_SERVER_SECRET_VAR}=s`] })).status).toBe(201);
    const listed = await docker(["ps", "-a", "--filter", `ancestor=${TAG}`, "--format", "{{.ID}}"]);
    expect(listed.code).toBe(0);
    const ids = listed.stdout.trim().split("\n");
    expect(ids).toEqual([runtime.engine.engine.get("cli-a").id.slice(0, 12)]);
    expect((await docker(["rm", "--force", ...ids])).code).toBe(0);
    expect(runtime.engine.engine.list().map((c) => c.name)).toEqual(["cli-b"]);
  });

  it("refuses what it does not serve, naming it, and logs it", async () => {
    const refused = await docker(["compose", "up"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("does not do: docker compose up");
    expect(unservedLog()).toContain('"argv":["compose","up"]');
  });
});
