/**
 * What `npm run deploy` needs before it builds anything, decided from plain facts (the parsed
 * wrangler config, and what was found out about this machine and the Cloudflare account) so every
 * decision can be tested without Cloudflare. Each unmet prerequisite is one short phrase saying what
 * to do; the caller prints them on one line. docs/deploy.md walks through each.
 */
import { describeInstanceType, INSTANCE_TYPES, isInstanceTypeName } from "./instance-types.ts";

/**
 * The Worker's settings a deploy depends on, by the names the Worker reads them (src/env.ts).
 * The bucket binding is the one wrangler.toml declares for durable workspaces and snapshots.
 */
export const API_TOKEN_SECRET = "SANDBOX_API_TOKEN";
export const BACKUP_BUCKET_BINDING = "SANDBOX_BACKUPS";
export const PREVIEW_DOMAIN_VAR = "SANDBOX_PREVIEW_DOMAIN";
export const PREVIEW_PATH_ORIGIN_VAR = "SANDBOX_PREVIEW_PATH_ORIGIN";
export const CONSOLE_VAR = "SANDBOX_CONSOLE";
/** Set by `npm start` for the local runtime only: in a deployed config they would name a machine of yours. */
export const LOCAL_ONLY_VARS = ["SANDBOX_CONTAINER_URL", "SANDBOX_RUNTIME_SECRET"] as const;

/** A route as wrangler accepts it: a pattern, or a pattern with its zone or custom domain. */
export type Route = string | { pattern: string; zone_name?: string; zone_id?: string; custom_domain?: boolean };

/** The parts of a wrangler config the deploy depends on (wrangler's own reader fills them). */
export interface DeployConfig {
  vars: Record<string, unknown>;
  r2Buckets: { binding: string; bucket_name?: string }[];
  containers: { class_name: string; max_instances?: number; instance_type?: string }[];
  routes: Route[];
}

/** What was found out beyond the config; undefined where it was not looked at. */
export interface DeployFacts {
  /** The container image builder (Docker, or what WRANGLER_DOCKER_BIN names) answers. */
  docker?: { ok: true } | { ok: false; why: string };
  /** Logged in to Cloudflare (wrangler login or CLOUDFLARE_API_TOKEN), as `wrangler whoami` says. */
  loggedIn?: boolean;
  /** The Worker's secret names (`wrangler secret list`), or why they could not be listed. */
  secrets?: { names: string[] } | { unknown: string };
}

function routePattern(route: Route): { pattern: string; customDomain: boolean } {
  return typeof route === "string" ? { pattern: route, customDomain: false } : { pattern: route.pattern, customDomain: route.custom_domain === true };
}

/** Whether a route sends every host under `domain` (`<port>-<id>.<domain>`) to the Worker. */
function routesWildcard(routes: readonly Route[], domain: string): boolean {
  return routes.some((route) => {
    const { pattern } = routePattern(route);
    return pattern.replace(/^https?:\/\//, "").toLowerCase() === `*.${domain}/*`;
  });
}

/** Whether a route (or a custom domain) sends `host` to the Worker. */
function routesHost(routes: readonly Route[], host: string): boolean {
  return routes.some((route) => {
    const { pattern, customDomain } = routePattern(route);
    const bare = pattern.replace(/^https?:\/\//, "").toLowerCase();
    return customDomain ? bare === host : bare === `${host}/*`;
  });
}

const text = (value: unknown) => (typeof value === "string" ? value : undefined);

/** What the config lacks or gets wrong; checkable without credentials (`npm run check:deploy`). */
export function configProblems(config: DeployConfig): string[] {
  const problems: string[] = [];
  if (API_TOKEN_SECRET in config.vars) {
    problems.push(`${API_TOKEN_SECRET} is a [vars] entry, readable by anyone with the config: delete it there and run \`wrangler secret put ${API_TOKEN_SECRET}\``);
  }
  for (const name of LOCAL_ONLY_VARS) if (name in config.vars) problems.push(`${name} is for the local runtime only: delete it from [vars]`);

  const bucket = config.r2Buckets.find((entry) => entry.binding === BACKUP_BUCKET_BINDING);
  if (!bucket?.bucket_name) problems.push(`no R2 bucket for ${BACKUP_BUCKET_BINDING} ([[r2_buckets]] binding = "${BACKUP_BUCKET_BINDING}" with a bucket_name)`);

  const container = config.containers[0];
  if (!container) problems.push("no [[containers]] entry for the Sandbox class");
  else {
    if (container.max_instances === undefined || container.max_instances < 1) problems.push("no max_instances in [[containers]] (how many sandboxes may be awake at once)");
    if (container.instance_type === undefined) problems.push(`no instance_type in [[containers]] (the platform's default is too small; the project's is ${describeInstanceType("basic")})`);
    else if (!isInstanceTypeName(container.instance_type)) problems.push(`instance_type "${container.instance_type}" in [[containers]] is not one of ${Object.keys(INSTANCE_TYPES).join(", ")}`);
  }

  const domain = text(config.vars[PREVIEW_DOMAIN_VAR])?.toLowerCase().replace(/^\.+|\.+$/g, "");
  if (domain && !routesWildcard(config.routes, domain)) {
    problems.push(`no route for *.${domain}/* (${PREVIEW_DOMAIN_VAR} is set: each preview URL is a host under it), e.g. routes = [{ pattern = "*.${domain}/*", zone_name = "<your zone>" }]`);
  }
  const pathOrigin = text(config.vars[PREVIEW_PATH_ORIGIN_VAR]);
  if (pathOrigin) {
    let host: string | undefined;
    try {
      host = new URL(pathOrigin).host.toLowerCase();
    } catch {
      problems.push(`${PREVIEW_PATH_ORIGIN_VAR} "${pathOrigin}" is not an origin (https://host)`);
    }
    if (host && !routesHost(config.routes, host)) problems.push(`no route for ${host}/* (${PREVIEW_PATH_ORIGIN_VAR} serves preview URLs there)`);
  }
  const consoleSwitch = config.vars[CONSOLE_VAR];
  if (consoleSwitch !== undefined && consoleSwitch !== "on" && consoleSwitch !== "off") {
    problems.push(`${CONSOLE_VAR} = ${JSON.stringify(consoleSwitch)}: the console is served only with "on"; say "on" or "off"`);
  }
  return problems;
}

/** What this machine or the account lacks, from what was looked at. */
export function environmentProblems(facts: DeployFacts): string[] {
  const problems: string[] = [];
  if (facts.docker && !facts.docker.ok) problems.push(`no Docker to build the image with (${facts.docker.why})`);
  if (facts.loggedIn === false) problems.push("not logged in to Cloudflare: run `wrangler login`, or set CLOUDFLARE_API_TOKEN");
  if (facts.secrets && "names" in facts.secrets && !facts.secrets.names.includes(API_TOKEN_SECRET)) {
    problems.push(`no ${API_TOKEN_SECRET} secret: run \`wrangler secret put ${API_TOKEN_SECRET}\` (without it the API refuses every request)`);
  }
  return problems;
}

/** The one line `npm run deploy` prints before it stops, or undefined when nothing is missing. */
export function missingLine(problems: readonly string[]): string | undefined {
  return problems.length === 0 ? undefined : `deploy: not ready: ${problems.join("; ")}`;
}
