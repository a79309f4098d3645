/**
 * `npm start`: the whole service on this machine, no Docker. Runs the local container runtime and the
 * Worker under wrangler's dev server (worker-dev.ts) together, with containers on: wrangler and
 * workerd run each sandbox's container through the runtime's Docker engine (WRANGLER_DOCKER_HOST)
 * and its `docker` command stand-in (WRANGLER_DOCKER_BIN, scripts/docker-cli/), so the Durable
 * Object's `ctx.container` is workerd's own, as on Cloudflare; prints the URL and API token; one Ctrl-C stops both. Both are watched
 * (supervise/): a Worker whose workerd or process died is brought back on the same port, with a
 * health line saying so; what cannot be brought back stops everything with a failure.
 *
 * Secrets stay off every command line and out of every environment: the API token and the runtime's
 * secret reach the Worker in an IPC message. The Worker's inspector (which can read any binding) is
 * closed unless SANDBOX_INSPECTOR_PORT asks for it.
 *
 * Env: PORT (Worker, default 8787; 0 picks a free one), RUNTIME_PORT (default 0: a free one),
 * SANDBOX_API_TOKEN (default: generated, or taken from .dev.vars), SANDBOX_RUNTIME_SECRET (default:
 * generated), SANDBOX_DATA_DIR (default .sandbox), the runtime's operator settings (runtime/settings.ts:
 * SANDBOX_ISOLATION — bwrap by default, `none` only when asked for —, SANDBOX_ALLOWED_PATHS,
 * SANDBOX_NETWORK_ALLOWED, SANDBOX_MAX_SANDBOXES, SANDBOX_WARM_POOL), SANDBOX_CONSOLE (default on: the web
 * console at / and the API reference at /v1/docs), SANDBOX_PREVIEW_DOMAIN and SANDBOX_PREVIEW_PATH_ORIGIN
 * (default unset: preview ports at http://<port>-<id>.localhost:<PORT>/), SANDBOX_INSPECTOR_PORT (default: no inspector), WRANGLER_PERSIST_TO
 * (default .wrangler/state, made or tightened to be its owner's only), SANDBOX_WRANGLER_CONFIG (default wrangler.toml).
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { userInfo } from "node:os";
import { fileURLToPath } from "node:url";
import { freePort } from "../runtime/ports.ts";
import { ensureOsPackages } from "./os-packages/ensure.ts";
import { privateState } from "./private-state.ts";
import { diskLine } from "./disk-reserve.ts";
import { enterOwnMountNamespace } from "../runtime/mount-namespace.ts";
import { startRuntime, type RunningRuntime } from "../runtime/server.ts";
import { defaultDataDir, runtimeSettingsFromEnv } from "../runtime/settings.ts";
import { describeMechanism } from "../runtime/container/cgroups.ts";
import { watchContainers } from "./supervise/container-watch.ts";
import { watchRuntime, type RuntimeWatch } from "./supervise/runtime-watch.ts";
import { WorkerSupervisor } from "./supervise/worker-supervisor.ts";
import { startWorkerProcess } from "./supervise/worker-process.ts";
import type { WorkerDevSettings } from "./worker-dev.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const HOST = "127.0.0.1";

function tokenFromDevVars(): string | undefined {
  const file = `${root}.dev.vars`;
  if (!existsSync(file)) return undefined;
  const match = /^\s*SANDBOX_API_TOKEN\s*=\s*"?([^"\n]+)"?\s*$/m.exec(readFileSync(file, "utf8"));
  return match?.[1]?.trim();
}

async function port(value: string | undefined, fallback: number): Promise<number> {
  const wanted = value === undefined || value === "" ? fallback : Number(value);
  if (!Number.isInteger(wanted) || wanted < 0 || wanted > 65535) throw new Error(`not a port: ${value}`);
  return wanted === 0 ? freePort(HOST) : wanted;
}

// The runtime in it mounts its sandboxes' disks where only this process tree sees them: they go with it, however it ends.
const sharedMounts = enterOwnMountNamespace();

// The OS packages the service needs (os-packages/packages.ts): installed here when we can, else named
// with the command that installs them. Without isolation (SANDBOX_ISOLATION=none) it starts anyway.
if (!ensureOsPackages(["start"], { required: process.env.SANDBOX_ISOLATION !== "none" })) process.exit(1);

const token = process.env.SANDBOX_API_TOKEN || tokenFromDevVars() || randomBytes(24).toString("base64url");
const generated = !process.env.SANDBOX_API_TOKEN && !tokenFromDevVars();
const workerPort = await port(process.env.PORT, 8787);
const inspectorPort = process.env.SANDBOX_INSPECTOR_PORT ? await port(process.env.SANDBOX_INSPECTOR_PORT, 0) : undefined;

let runtime: RunningRuntime;
// Unset until the runtime is up: the watch waits for it.
const containerWatch = watchContainers(() => runtime as RunningRuntime | undefined, (line) => console.log(line));
try {
  runtime = await startRuntime({
    onStopAsked: (key) => containerWatch.stopAsked(key),
    ...runtimeSettingsFromEnv(process.env),
    port: await port(process.env.RUNTIME_PORT, 0),
    host: HOST,
    dataDir: process.env.SANDBOX_DATA_DIR ?? defaultDataDir(root),
    ...(process.env.SANDBOX_RUNTIME_SECRET ? { secret: process.env.SANDBOX_RUNTIME_SECRET } : {}),
  });
} catch (error) {
  console.error(`\nnpm start: ${(error as Error).message}\n`);
  process.exit(1);
}

const settings: WorkerDevSettings = {
  config: process.env.SANDBOX_WRANGLER_CONFIG ?? `${root}wrangler.toml`,
  host: HOST,
  port: workerPort,
  ...(inspectorPort === undefined ? {} : { inspectorPort }),
  persistTo: process.env.WRANGLER_PERSIST_TO ?? `${root}.wrangler/state`,
  // The web console and the API reference are on here unless SANDBOX_CONSOLE says otherwise.
  vars: {
    SANDBOX_CONTAINER_URL: runtime.url,
    SANDBOX_CONSOLE: process.env.SANDBOX_CONSOLE || "on",
    // Preview ports: <port>-<id>.localhost on this port unless the operator chooses otherwise.
    ...(process.env.SANDBOX_PREVIEW_DOMAIN ? { SANDBOX_PREVIEW_DOMAIN: process.env.SANDBOX_PREVIEW_DOMAIN } : {}),
    ...(process.env.SANDBOX_PREVIEW_PATH_ORIGIN ? { SANDBOX_PREVIEW_PATH_ORIGIN: process.env.SANDBOX_PREVIEW_PATH_ORIGIN } : {}),
  },
  secrets: { SANDBOX_API_TOKEN: token, SANDBOX_RUNTIME_SECRET: runtime.secret },
};
// The Worker's state holds every sandbox's secrets and snapshots: its owner's only (private-state.ts).
privateState(settings.persistTo);
const startWorker = () =>
  startWorkerProcess(settings, root, {
    ...process.env,
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    WRANGLER_SEND_METRICS: "false",
    // Containers through the runtime's engine, and the docker command wrangler runs (build, pull, …) its stand-in.
    WRANGLER_DOCKER_HOST: runtime.engine.url,
    WRANGLER_DOCKER_BIN: `${root}scripts/docker-cli/docker`,
    SANDBOX_NODE: process.execPath,
  });

let supervisor: WorkerSupervisor | undefined;
let runtimeWatch: RuntimeWatch | undefined;
let stopping: Promise<void> | undefined;
function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    runtimeWatch?.stop();
    containerWatch.stop();
    await supervisor?.stop(5_000);
    await runtime.close();
    process.exit(code);
  })();
  return stopping;
}
/** Says why the service cannot go on, then stops everything with a failure. */
function giveUp(reason: string): void {
  console.error(`\nnpm start: ${reason}: stopping\n`);
  void stop(1);
}
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));

/** Where exposed ports' pages are: each on an origin of its own, never the console's. */
function previewsLine(vars: Record<string, string>, port: number): string {
  if (vars.SANDBOX_PREVIEW_DOMAIN) return `https://<port>-<id>.${vars.SANDBOX_PREVIEW_DOMAIN}/`;
  if (vars.SANDBOX_PREVIEW_PATH_ORIGIN) return `${vars.SANDBOX_PREVIEW_PATH_ORIGIN}/v1/sandboxes/<id>/ports/<port>/  (that origin serves nothing else)`;
  return `http://<port>-<id>.localhost:${port}/  (*.localhost is this machine, for every client)`;
}

const url = `http://${HOST}:${workerPort}`;
try {
  supervisor = new WorkerSupervisor(await startWorker(), { healthUrl: `${url}/health`, start: startWorker, say: (line) => console.log(line), giveUp });
} catch (error) {
  console.error(`\nnpm start: the Worker did not start: ${(error as Error).message}`);
  await stop(1);
}
runtimeWatch = watchRuntime(runtime, { say: (line) => console.log(line), giveUp });

const isolation =
  runtime.isolation === "none"
    ? `none (SANDBOX_ISOLATION=none): commands run unconfined, as ${userInfo().username}, with this machine's files, processes and network`
    : `bwrap: each sandbox a container of its own (/workspace, root inside, ${process.getuid?.() === 0 ? "an unprivileged uid of its own outside" : `${userInfo().username} outside`}), no network unless it allows it`;
const { limits } = runtime.pool.containerSettings;
const { disks } = runtime.pool.containerSettings;
const containers = runtime.isolation !== "none";
const disk = diskLine(runtime.dataDir, settings.persistTo, containers && process.getuid?.() === 0, containers ? { unavailable: await disks.probe() } : undefined);
const leftMounted = containers && disks.unavailable === undefined && sharedMounts !== undefined
  ? `sandboxes' disks are mounted in the host's mount namespace (${sharedMounts}): killed outright, the service leaves them mounted until it starts again`
  : undefined;
const diskLimit = containers && disks.unavailable === undefined ? `, a disk of ${Math.round(limits.diskBytes / 1024 ** 2)} MiB` : "";
const limitsLine = `${limits.pids} processes, ${Math.round(limits.memoryBytes / 1024 ** 2)} MiB, CPU weight ${limits.cpuWeight}, ${limits.openFiles} open files per process${diskLimit} (${describeMechanism(runtime.pool.containerSettings.mechanism())})`;
console.log(`
  Sandbox service ready (Ctrl-C stops everything)

    URL:       ${url}
    Token:     ${token}${generated ? "   (generated; set SANDBOX_API_TOKEN to choose one)" : ""}
    Isolation: ${isolation}
    Limits:    ${limitsLine}
    Runtime:   ${runtime.url}  (sandboxes in ${runtime.dataDir}; answers only to its secret)${[disk, leftMounted].filter(Boolean).map((line) => `\n    Disk:      ${line}`).join("")}
    Docker:    ${runtime.engine.url}  (the runtime's Docker Engine API: workerd runs each sandbox's container through it)
    Console:   ${settings.vars.SANDBOX_CONSOLE === "on" ? `${url}/  (paste the token there)` : "off (SANDBOX_CONSOLE)"}
    Previews:  ${previewsLine(settings.vars, workerPort)}
    API docs:  ${settings.vars.SANDBOX_CONSOLE === "on" ? `${url}/v1/docs  ·  ` : ""}${url}/v1/openapi.json${inspectorPort === undefined ? "" : `\n    Inspector: ${HOST}:${inspectorPort}  (it reads every binding: keep it closed on shared machines)`}

  Try:
    curl -N -H "Authorization: Bearer ${token}" \\
      -d '{"command":"echo hello; uname -a"}' ${url}/v1/sandboxes/demo/exec/stream
`);
