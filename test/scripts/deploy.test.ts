/**
 * `npm run deploy`'s prerequisites: real wrangler config files (read by wrangler's own reader) and
 * the script itself, whose answer is one line and an exit status. What needs Cloudflare is reached
 * only as far as a machine without credentials goes: `wrangler whoami` answers "not logged in"
 * without the network; the secret list's decision is tested on its facts.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { configProblems, environmentProblems, missingLine } from "../../scripts/deploy/prerequisites.ts";
import { readDeployConfig } from "../../scripts/deploy/probes.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "deploy-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const COMPLETE = {
  vars: "",
  routes: "",
  bucket: '[[r2_buckets]]\nbinding = "SANDBOX_BACKUPS"\nbucket_name = "sandbox-backups"\n',
  containers: '[[containers]]\nclass_name = "Sandbox"\nimage = "./Dockerfile"\nmax_instances = 5\ninstance_type = "basic"\n',
};

let files = 0;
/** A wrangler.toml of the complete config with some parts replaced; returns its path. */
function config(parts: Partial<typeof COMPLETE> = {}): string {
  const { vars, routes, bucket, containers } = { ...COMPLETE, ...parts };
  const text = [
    'name = "sandbox-deploy-test"',
    'main = "src/index.ts"',
    'compatibility_date = "2026-10-20"',
    routes,
    `[vars]\nSANDBOX_SLEEP_AFTER = "10m"\n${vars}`,
    '[[durable_objects.bindings]]\nname = "Sandbox"\nclass_name = "Sandbox"\n',
    '[[migrations]]\ntag = "v1"\nnew_sqlite_classes = ["Sandbox"]\n',
    bucket,
    containers,
  ].join("\n");
  const folder = join(dir, String(++files));
  mkdirSync(folder);
  writeFileSync(join(folder, "wrangler.toml"), text);
  writeFileSync(join(folder, "Dockerfile"), "FROM scratch\n");
  return join(folder, "wrangler.toml");
}

const problemsOf = (parts: Partial<typeof COMPLETE>) => configProblems(readDeployConfig(config(parts)));

/** How long the deploy script may take: it runs wrangler, which bundles the Worker (slow on a busy machine). */
const DEPLOY_SCRIPT_MS = 60_000;

/** Runs the deploy script; its output and exit status. */
function deployScript(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(join(root, "node_modules", ".bin", "node"), [join(root, "scripts", "deploy.ts"), ...args], { cwd: root, encoding: "utf8", env, timeout: DEPLOY_SCRIPT_MS });
  return { status: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

describe("the deploy's prerequisites in the config", () => {
  it("finds nothing missing in a complete config", () => {
    expect(problemsOf({})).toEqual([]);
  });

  it("wants the API token as a secret, never a var, and no local runtime settings", () => {
    const problems = problemsOf({ vars: 'SANDBOX_API_TOKEN = "hunter2"\nSANDBOX_CONTAINER_URL = "http://127.0.0.1:9000"\n' });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^SANDBOX_API_TOKEN is a \[vars\] entry.*wrangler secret put SANDBOX_API_TOKEN/);
    expect(problems[1]).toMatch(/^SANDBOX_CONTAINER_URL is for the local runtime only/);
  });

  it("wants the R2 bucket of durable workspaces", () => {
    expect(problemsOf({ bucket: "" })).toEqual([expect.stringMatching(/^no R2 bucket for SANDBOX_BACKUPS/)]);
    expect(problemsOf({ bucket: '[[r2_buckets]]\nbinding = "OTHER"\nbucket_name = "other-bucket"\n' })).toEqual([expect.stringMatching(/^no R2 bucket for SANDBOX_BACKUPS/)]);
  });

  it("wants max_instances and a known instance type", () => {
    expect(problemsOf({ containers: '[[containers]]\nclass_name = "Sandbox"\nimage = "./Dockerfile"\n' })).toEqual([
      expect.stringMatching(/^no max_instances/),
      expect.stringMatching(/^no instance_type in \[\[containers\]\] \(the platform's default is too small; the project's is basic \(1\/4 vCPU, 1 GiB, 4 GB disk\)\)/),
    ]);
    // wrangler still takes the old names ("dev" is lite): ours are the platform's current ones.
    expect(problemsOf({ containers: COMPLETE.containers.replace('"basic"', '"dev"') })).toEqual([expect.stringMatching(/^instance_type "dev" .* is not one of lite, basic, standard-1/)]);
    expect(() => problemsOf({ containers: COMPLETE.containers.replace('"basic"', '"standard-9"') })).toThrow(/instance_type/);
  });

  it("wants a wildcard route for the preview domain, and a route for the path-based preview origin", () => {
    const previews = 'SANDBOX_PREVIEW_DOMAIN = "preview.example.com"\nSANDBOX_PREVIEW_PATH_ORIGIN = "https://paths.example.com"\n';
    expect(problemsOf({ vars: previews })).toEqual([expect.stringMatching(/^no route for \*\.preview\.example\.com\/\*/), expect.stringMatching(/^no route for paths\.example\.com\/\*/)]);
    expect(problemsOf({ vars: previews, routes: 'routes = [{ pattern = "api.example.com/*", zone_name = "example.com" }]\n' })).toHaveLength(2);
    const routed = 'routes = [{ pattern = "*.preview.example.com/*", zone_name = "example.com" }, { pattern = "paths.example.com", custom_domain = true }]\n';
    expect(problemsOf({ vars: previews, routes: routed })).toEqual([]);
  });

  it("takes the console switch as on or off only", () => {
    expect(problemsOf({ vars: 'SANDBOX_CONSOLE = "on"\n' })).toEqual([]);
    expect(problemsOf({ vars: 'SANDBOX_CONSOLE = "yes"\n' })).toEqual([expect.stringMatching(/^SANDBOX_CONSOLE = "yes": the console is served only with "on"/)]);
  });
});

describe("the deploy's prerequisites on the machine and the account", () => {
  it("wants the API token among the Worker's secrets, when they could be listed", () => {
    expect(environmentProblems({ secrets: { names: ["OTHER"] } })).toEqual([expect.stringMatching(/^no SANDBOX_API_TOKEN secret: run `wrangler secret put SANDBOX_API_TOKEN`/)]);
    expect(environmentProblems({ secrets: { names: ["SANDBOX_API_TOKEN"] } })).toEqual([]);
    expect(environmentProblems({ secrets: { unknown: "network down" } })).toEqual([]);
  });

  it("wants Docker and a login", () => {
    expect(environmentProblems({ docker: { ok: false, why: "docker is not installed" }, loggedIn: false })).toEqual([
      "no Docker to build the image with (docker is not installed)",
      expect.stringMatching(/^not logged in to Cloudflare: run `wrangler login`, or set CLOUDFLARE_API_TOKEN/),
    ]);
    expect(missingLine([])).toBeUndefined();
  });
});

describe("npm run deploy", () => {
  it("passes the project's own wrangler.toml in a dry run (npm run check:deploy), without credentials", () => {
    expect(deployScript(["--dry-run", "--check-only"])).toEqual({ status: 0, output: expect.stringMatching(/^deploy: ready/) });
  }, DEPLOY_SCRIPT_MS);

  it("says in one line what the config lacks, and stops", () => {
    const result = deployScript(["--dry-run", "--check-only", "--config", config({ bucket: "", vars: 'SANDBOX_API_TOKEN = "x"\n' })]);
    expect(result.status).toBe(1);
    expect(result.output.split("\n")).toEqual([expect.stringMatching(/^deploy: not ready: SANDBOX_API_TOKEN is a \[vars\] entry.*; no R2 bucket for SANDBOX_BACKUPS/)]);
  }, DEPLOY_SCRIPT_MS);

  it("stops without a login or Docker, before building anything", () => {
    const home = join(dir, "home");
    mkdirSync(home, { recursive: true });
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), WRANGLER_DOCKER_BIN: join(dir, "no-docker"), WRANGLER_SEND_METRICS: "false" };
    const result = deployScript(["--config", config()], env);
    expect(result.status).toBe(1);
    expect(result.output.split("\n")).toEqual([
      `deploy: not ready: no Docker to build the image with (${join(dir, "no-docker")} is not installed); not logged in to Cloudflare: run \`wrangler login\`, or set CLOUDFLARE_API_TOKEN`,
    ]);
  }, DEPLOY_SCRIPT_MS);
});
