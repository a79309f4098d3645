/**
 * `npm run runtime`: the local container runtime on its own (`npm start` runs it beside wrangler dev).
 * Env: RUNTIME_PORT (default 8790), RUNTIME_HOST (127.0.0.1), SANDBOX_DATA_DIR (.sandbox),
 * SANDBOX_ISOLATION (none: the isolation of sandboxes that ask for none; each sandbox may ask for its
 * own through getSandbox options), the other SANDBOX_* isolation defaults of protocol/isolation.ts, and
 * SANDBOX_BWRAP_PATH (the bubblewrap binary; default `bwrap` on PATH).
 */
import { startRuntime } from "./server.ts";

const runtime = await startRuntime({
  port: Number(process.env.RUNTIME_PORT ?? 8790),
  host: process.env.RUNTIME_HOST ?? "127.0.0.1",
  dataDir: process.env.SANDBOX_DATA_DIR ?? ".sandbox",
  isolation: process.env.SANDBOX_ISOLATION,
});
console.log(`container runtime listening on ${runtime.url} (sandboxes in ${runtime.dataDir})`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await runtime.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
