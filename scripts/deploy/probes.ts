/**
 * Finding out the facts prerequisites.ts decides on: the wrangler config as wrangler itself reads it
 * (TOML or JSON, with its defaults and paths resolved), whether Docker answers, whether wrangler is
 * logged in, and which secrets the deployed Worker has. Only the last two ask Cloudflare, through
 * wrangler's own commands; a machine without credentials gets its answer without the network.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { onPath } from "../os-packages/probe.ts";
import type { DeployConfig, DeployFacts, Route } from "./prerequisites.ts";

const WRANGLER_TIMEOUT_MS = 60_000;

/** wrangler.toml (or .json/.jsonc) as wrangler reads it for a deploy. */
export function readDeployConfig(configPath: string, env?: string): DeployConfig {
  const config = unstable_readConfig({ config: configPath, ...(env === undefined ? {} : { env }) }, { hideWarnings: true });
  const routes: Route[] = [...(config.routes ?? []), ...(config.route ? [config.route] : [])];
  return {
    vars: config.vars ?? {},
    r2Buckets: config.r2_buckets ?? [],
    containers: (config.containers ?? []).map((entry: { class_name: string; max_instances?: number; instance_type?: unknown }) => ({
      class_name: entry.class_name,
      ...(entry.max_instances === undefined ? {} : { max_instances: entry.max_instances }),
      ...(entry.instance_type === undefined ? {} : { instance_type: String(entry.instance_type) }),
    })),
    routes,
  };
}

/** Whether the image builder wrangler uses (docker, or WRANGLER_DOCKER_BIN) is there and its engine answers. */
export function probeDocker(env: NodeJS.ProcessEnv): NonNullable<DeployFacts["docker"]> {
  const docker = env.WRANGLER_DOCKER_BIN || "docker";
  const found = docker.includes("/") ? existsSync(docker) : onPath(docker, env.PATH ?? "");
  if (!found) return { ok: false, why: `${docker} is not installed` };
  const info = spawnSync(docker, ["info"], { encoding: "utf8", timeout: 20_000, env });
  if (info.status === 0) return { ok: true };
  const why = (info.stderr || info.error?.message || "").trim().split("\n").pop() || `exit ${info.status}`;
  return { ok: false, why: `\`${docker} info\` failed: ${why}` };
}

export interface Wrangler {
  /** Runs `wrangler args…`; status and output. */
  run(args: string[]): { status: number | null; stdout: string; stderr: string };
}

/** The project's own wrangler (node_modules/.bin), run with the given environment. */
export function projectWrangler(root: string, env: NodeJS.ProcessEnv): Wrangler {
  const bin = join(root, "node_modules", ".bin", "wrangler");
  return {
    run(args) {
      const result = spawnSync(bin, args, { cwd: root, encoding: "utf8", timeout: WRANGLER_TIMEOUT_MS, env, maxBuffer: 16 * 1024 * 1024 });
      return { status: result.status, stdout: result.stdout ?? "", stderr: `${result.stderr ?? ""}${result.error ? String(result.error) : ""}` };
    },
  };
}

/** true or false as `wrangler whoami --json` says; undefined when it could not tell (the API unreachable). */
export function probeLogin(wrangler: Wrangler): boolean | undefined {
  const result = wrangler.run(["whoami", "--json"]);
  try {
    const answer = JSON.parse(result.stdout.trim().split("\n").pop() ?? "") as { loggedIn?: boolean };
    if (typeof answer.loggedIn === "boolean") return answer.loggedIn;
  } catch {
    // not JSON: an error, said below by the caller's note
  }
  return undefined;
}

/**
 * The deployed Worker's secret names. A Worker not deployed yet has none (`wrangler secret put` on
 * its name creates it with the secret, which is what a first deploy needs).
 */
export function listSecrets(wrangler: Wrangler, configPath: string, env?: string): NonNullable<DeployFacts["secrets"]> {
  const result = wrangler.run(["secret", "list", "--format", "json", "--config", configPath, ...(env === undefined ? [] : ["--env", env])]);
  if (result.status === 0) {
    try {
      const start = result.stdout.indexOf("[");
      return { names: (JSON.parse(result.stdout.slice(start)) as { name: string }[]).map((secret) => secret.name) };
    } catch {
      return { unknown: "`wrangler secret list` did not answer with a list" };
    }
  }
  const output = `${result.stdout}\n${result.stderr}`;
  if (/does not exist|not found|\[code: 10007\]/i.test(output)) return { names: [] };
  return { unknown: output.trim().split("\n").filter(Boolean).pop() ?? `wrangler exited with ${result.status}` };
}
