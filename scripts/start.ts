/**
 * `npm start`: the whole service on this machine, no Docker. Runs the local container runtime and
 * `wrangler dev` (containers disabled: the runtime stands in for them) together; prints the URL and
 * API token; one Ctrl-C stops both.
 *
 * Env: PORT (Worker, default 8787; 0 picks a free one), RUNTIME_PORT (default 0: a free one),
 * SANDBOX_API_TOKEN (default: generated, or taken from .dev.vars), SANDBOX_DATA_DIR (default .sandbox),
 * SANDBOX_ISOLATION, WRANGLER_PERSIST_TO (default .wrangler/state), SANDBOX_WRANGLER_CONFIG (default wrangler.toml).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../runtime/ports.ts";
import { startRuntime } from "../runtime/server.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const HOST = "127.0.0.1";
const READY_TIMEOUT_MS = 90_000;

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

async function waitForWorker(url: string, wrangler: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (wrangler.exitCode !== null) throw new Error(`wrangler dev exited (code ${wrangler.exitCode}) before it was ready`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`wrangler dev did not answer on ${url} within ${READY_TIMEOUT_MS / 1000} s`);
}

const token = process.env.SANDBOX_API_TOKEN || tokenFromDevVars() || randomBytes(24).toString("base64url");
const generated = !process.env.SANDBOX_API_TOKEN && !tokenFromDevVars();
const workerPort = await port(process.env.PORT, 8787);

const runtime = await startRuntime({
  port: await port(process.env.RUNTIME_PORT, 0),
  host: HOST,
  dataDir: process.env.SANDBOX_DATA_DIR ?? `${root}.sandbox`,
  isolation: process.env.SANDBOX_ISOLATION,
});

const wranglerPackage = createRequire(import.meta.url).resolve("wrangler/package.json");
const wranglerBin = join(dirname(wranglerPackage), "bin", "wrangler.js");
const wrangler = spawn(
  process.execPath,
  [
    wranglerBin,
    "dev",
    ...(process.env.SANDBOX_WRANGLER_CONFIG ? ["--config", process.env.SANDBOX_WRANGLER_CONFIG] : []),
    "--ip", HOST,
    "--port", String(workerPort),
    "--inspector-port", String(await freePort(HOST)),
    "--enable-containers=false",
    "--show-interactive-dev-session=false",
    "--persist-to", process.env.WRANGLER_PERSIST_TO ?? `${root}.wrangler/state`,
    "--var", `SANDBOX_CONTAINER_URL:${runtime.url}`,
    "--var", `SANDBOX_API_TOKEN:${token}`,
  ],
  {
    cwd: root,
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
    stdio: ["ignore", "inherit", "inherit"],
  },
);

let stopping: Promise<void> | undefined;
function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    if (wrangler.exitCode === null && wrangler.signalCode === null) {
      const exited = new Promise((resolve) => wrangler.once("exit", resolve));
      wrangler.kill("SIGTERM");
      const timer = setTimeout(() => wrangler.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await runtime.close();
    process.exit(code);
  })();
  return stopping;
}
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));
wrangler.once("exit", (code) => void stop(code ?? 1));

const url = `http://${HOST}:${workerPort}`;
try {
  await waitForWorker(url, wrangler);
} catch (error) {
  console.error(`\nnpm start: ${(error as Error).message}`);
  await stop(1);
}

console.log(`
  Sandbox service ready (Ctrl-C stops everything)

    URL:      ${url}
    Token:    ${token}${generated ? "   (generated; set SANDBOX_API_TOKEN to choose one)" : ""}
    Runtime:  ${runtime.url}  (sandboxes in ${runtime.dataDir})
    API docs: ${url}/v1/openapi.json

  Try:
    curl -N -H "Authorization: Bearer ${token}" \\
      -d '{"command":"echo hello; uname -a"}' ${url}/v1/sandboxes/demo/exec/stream
`);
