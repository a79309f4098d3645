/**
 * `npm run deploy`: checks what a deploy to Cloudflare needs, says in one line what is missing and
 * stops (exit 1) before anything is built; then runs `wrangler deploy`, which builds the image with
 * Docker and uploads the Worker, the Durable Object and the container. docs/deploy.md is the guide.
 *
 *   node scripts/deploy.ts [--dry-run] [--check-only] [--config <wrangler.toml>] [--env <name>] [<wrangler deploy args>…]
 *
 * Arguments it does not know go to `wrangler deploy` as they are (`npm run deploy -- --env staging`).
 * --dry-run (`npm run check:deploy`, which CI runs): the config's checks only, which need no
 * credentials, then `wrangler deploy --dry-run` of the bundle, with no Docker and no upload.
 * --check-only: the checks, and no wrangler deploy at all.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { configProblems, environmentProblems, missingLine, type DeployFacts } from "./deploy/prerequisites.ts";
import { listSecrets, probeDocker, probeLogin, projectWrangler, readDeployConfig } from "./deploy/probes.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
/** Where the dry run leaves the bundle it checked. */
const DRY_RUN_OUTDIR = ".wrangler/dry-run";

interface Options {
  dryRun: boolean;
  checkOnly: boolean;
  config: string;
  /** wrangler's `--env`: the named environment of the config that is deployed. */
  env?: string;
  wranglerArgs: string[];
}

function parseArgs(argv: string[]): Options {
  const options: Options = { dryRun: false, checkOnly: false, config: resolve(root, "wrangler.toml"), wranglerArgs: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      options.wranglerArgs.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "--dry-run") options.dryRun = true;
    else if (arg === "--check-only") options.checkOnly = true;
    else if ((arg === "--config" || arg === "-c") && argv[i + 1] !== undefined) options.config = resolve(argv[++i]!);
    else if ((arg === "--env" || arg === "-e") && argv[i + 1] !== undefined) options.env = argv[++i]!;
    else options.wranglerArgs.push(arg);
  }
  return options;
}

const options = parseArgs(process.argv.slice(2));
let problems: string[];
try {
  problems = configProblems(readDeployConfig(options.config, options.env));
} catch (error) {
  problems = [`no readable wrangler config at ${options.config}: ${(error as Error).message.replace(/\s*\n\s*/g, " ")}`];
}

const notes: string[] = [];
if (!options.dryRun) {
  const wrangler = projectWrangler(root, process.env);
  const facts: DeployFacts = { docker: probeDocker(process.env) };
  facts.loggedIn = probeLogin(wrangler);
  if (facts.loggedIn === undefined) notes.push("could not tell whether wrangler is logged in (`wrangler whoami` failed)");
  if (facts.loggedIn !== false) {
    facts.secrets = listSecrets(wrangler, options.config, options.env);
    if ("unknown" in facts.secrets) notes.push(`secrets not checked: ${facts.secrets.unknown}`);
  }
  problems.push(...environmentProblems(facts));
}

const missing = missingLine(problems);
if (missing !== undefined) {
  console.error(missing);
  process.exit(1);
}
console.log(`deploy: ready${options.dryRun ? " (config checked; credentials, Docker and secrets are not, in a dry run)" : ""}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`);
if (options.checkOnly) process.exit(0);

const target = ["--config", options.config, ...(options.env === undefined ? [] : ["--env", options.env])];
const deployArgs = options.dryRun
  ? ["deploy", "--dry-run", "--containers-rollout=none", "--outdir", DRY_RUN_OUTDIR, ...target, ...options.wranglerArgs]
  : ["deploy", ...target, ...options.wranglerArgs];
const deploy = spawnSync(resolve(root, "node_modules", ".bin", "wrangler"), deployArgs, { cwd: root, stdio: "inherit" });
process.exit(deploy.status ?? 1);
