/**
 * The operator's settings of the runtime, read from the environment of `npm start` / `npm run runtime`:
 *   SANDBOX_ISOLATION      bwrap (default where bubblewrap runs) or none: the floor of every sandbox
 *   SANDBOX_ALLOWED_PATHS  host paths sandboxes may mount (colon-separated or a JSON array; default none)
 *   SANDBOX_NETWORK_ALLOWED 1 (default) or 0: whether any sandbox may have outbound network
 *   SANDBOX_MAX_SANDBOXES  live sandboxes at most (default 32); one more start is 429 TOO_MANY_SANDBOXES
 *   SANDBOX_WARM_POOL      booted container servers kept ready for new sandboxes (default 2; 0: none),
 *                          each ~50 MB of memory while it waits
 *   SANDBOX_EGRESS_TEST_HOSTS  tests only: the egress proxy's test name map (JSON, egress/test-hosts.ts)
 *   SANDBOX_EPHEMERAL_WORKSPACES  1: every start begins with an empty workspace, as on Cloudflare
 *                          (default: a sandbox's workspace stays on disk between starts)
 * The isolation defaults of every sandbox (SANDBOX_ALLOW_NETWORK, SANDBOX_READ_ONLY_PATHS,
 * SANDBOX_BWRAP_ARGS, …) and SANDBOX_BWRAP_PATH are read where they are applied (isolation.ts); what
 * each sandbox may take (SANDBOX_PIDS_MAX, SANDBOX_MEMORY_MAX, SANDBOX_CPU_WEIGHT, SANDBOX_NOFILE_MAX, SANDBOX_DISK_MAX)
 * in container/limits.ts.
 */
import path from "node:path";
import type { RuntimeOptions } from "./server.ts";
import { limitsFromEnv } from "./container/limits.ts";
import { testHostsSchema } from "./egress/test-hosts.ts";
import { closedAncestor } from "./container/reachable.ts";
import { createHash } from "node:crypto";
import { chmodSync } from "node:fs";
import { makeFolder, PASS_THROUGH_MODE } from "./folders.ts";

/** A couple: enough for one sandbox after another to start warm, little memory spent waiting. */
const DEFAULT_WARM_SERVERS = 2;

export type RuntimeSettings = Pick<RuntimeOptions, "isolation" | "allowedPaths" | "networkAllowed" | "maxContainers" | "warmServers" | "ephemeralWorkspaces" | "limits" | "egressTestHosts">;

export function runtimeSettingsFromEnv(env: Record<string, string | undefined>): RuntimeSettings {
  const settings: RuntimeSettings = {};
  if (env.SANDBOX_ISOLATION) settings.isolation = env.SANDBOX_ISOLATION;
  if (env.SANDBOX_ALLOWED_PATHS) settings.allowedPaths = parsePaths(env.SANDBOX_ALLOWED_PATHS, "SANDBOX_ALLOWED_PATHS");
  if (env.SANDBOX_NETWORK_ALLOWED) {
    if (env.SANDBOX_NETWORK_ALLOWED !== "0" && env.SANDBOX_NETWORK_ALLOWED !== "1") {
      throw new Error(`SANDBOX_NETWORK_ALLOWED must be 1 or 0, not "${env.SANDBOX_NETWORK_ALLOWED}"`);
    }
    settings.networkAllowed = env.SANDBOX_NETWORK_ALLOWED === "1";
  }
  if (env.SANDBOX_MAX_SANDBOXES) {
    const max = Number(env.SANDBOX_MAX_SANDBOXES);
    if (!Number.isInteger(max) || max < 1) throw new Error(`SANDBOX_MAX_SANDBOXES must be a whole number ≥ 1, not "${env.SANDBOX_MAX_SANDBOXES}"`);
    settings.maxContainers = max;
  }
  const warm = env.SANDBOX_WARM_POOL === undefined || env.SANDBOX_WARM_POOL === "" ? DEFAULT_WARM_SERVERS : Number(env.SANDBOX_WARM_POOL);
  if (!Number.isInteger(warm) || warm < 0) throw new Error(`SANDBOX_WARM_POOL must be a whole number ≥ 0, not "${env.SANDBOX_WARM_POOL}"`);
  settings.warmServers = warm;
  if (env.SANDBOX_EPHEMERAL_WORKSPACES === "1" || env.SANDBOX_EPHEMERAL_WORKSPACES === "true") settings.ephemeralWorkspaces = true;
  settings.limits = limitsFromEnv(env);
  if (env.SANDBOX_EGRESS_TEST_HOSTS) settings.egressTestHosts = testHostsSchema.parse(JSON.parse(env.SANDBOX_EGRESS_TEST_HOSTS));
  return settings;
}

/** A JSON array of absolute paths, or a colon-separated list. */
function parsePaths(value: string, name: string): string[] {
  const text = value.trim();
  let paths: unknown;
  try {
    paths = text.startsWith("[") ? JSON.parse(text) : text.split(":").filter((p) => p !== "");
  } catch {
    throw new Error(`${name} must be a JSON array of paths or a colon-separated list`);
  }
  if (!Array.isArray(paths) || !paths.every((p) => typeof p === "string" && path.isAbsolute(p))) {
    throw new Error(`${name} must list absolute paths`);
  }
  return paths;
}

/**
 * Where sandboxes live unless SANDBOX_DATA_DIR says: `.sandbox` in `checkout`. A root runtime's
 * containers run as other users, who must pass through every folder above it; a checkout under a
 * folder closed to them (root's 0700 home) keeps its sandboxes under /var/lib/edge-sandbox instead.
 */
export function defaultDataDir(checkout: string): string {
  const beside = path.join(checkout, ".sandbox");
  if (process.getuid?.() !== 0 || closedAncestor(beside) === undefined) return beside;
  const parent = "/var/lib/edge-sandbox";
  makeFolder(parent, PASS_THROUGH_MODE);
  chmodSync(parent, PASS_THROUGH_MODE); // passed through, never listed
  return path.join(parent, createHash("sha256").update(checkout).digest("hex").slice(0, 12));
}
