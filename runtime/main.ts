/**
 * `npm run runtime`: the local container runtime on its own (`npm start` runs it beside the Worker).
 * Env: RUNTIME_PORT (default 8790), RUNTIME_HOST (127.0.0.1), SANDBOX_DATA_DIR (.sandbox), the
 * operator's settings of settings.ts (SANDBOX_ISOLATION, SANDBOX_ALLOWED_PATHS, SANDBOX_MAX_SANDBOXES),
 * the other SANDBOX_* isolation defaults of protocol/isolation.ts, SANDBOX_BWRAP_PATH (the bubblewrap
 * binary; default `bwrap` on PATH) and SANDBOX_RUNTIME_SECRET (default: generated).
 *
 * The Worker must be given the runtime's secret as its SANDBOX_RUNTIME_SECRET binding. A generated one
 * is written to `<data dir>/runtime.secret` (mode 0600), never printed or put on a command line.
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startRuntime } from "./server.ts";
import { defaultDataDir, runtimeSettingsFromEnv } from "./settings.ts";
import { enterOwnMountNamespace } from "./mount-namespace.ts";

// Its sandboxes' disks are mounted where only it sees them, and go when it goes, however it ends.
const sharedMounts = enterOwnMountNamespace();

let runtime;
try {
  runtime = await startRuntime({
    ...runtimeSettingsFromEnv(process.env),
    port: Number(process.env.RUNTIME_PORT ?? 8790),
    host: process.env.RUNTIME_HOST ?? "127.0.0.1",
    dataDir: process.env.SANDBOX_DATA_DIR ?? defaultDataDir(process.cwd()),
    ...(process.env.SANDBOX_RUNTIME_SECRET ? { secret: process.env.SANDBOX_RUNTIME_SECRET } : {}),
  });
} catch (error) {
  console.error(`runtime: ${(error as Error).message}`);
  process.exit(1);
}
console.log(`container runtime listening on ${runtime.url} (sandboxes in ${runtime.dataDir}, isolation ${runtime.isolation})`);
console.log(`its Docker engine: ${runtime.engine.url}`);
if (sharedMounts && (await runtime.pool.containerSettings.disks.probe()) === undefined) console.warn(`runtime: sandboxes' disks are mounted in the host's mount namespace (${sharedMounts}): killed outright, the runtime leaves them mounted until it starts again`);
if (!process.env.SANDBOX_RUNTIME_SECRET) {
  const file = join(runtime.dataDir, "runtime.secret");
  writeFileSync(file, `${runtime.secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // the mode above applies only to a new file
  console.log(`its secret is in ${file}: give it to the Worker as SANDBOX_RUNTIME_SECRET (e.g. in .dev.vars)`);
}

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await runtime!.close();
  process.exit(0);
}
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
