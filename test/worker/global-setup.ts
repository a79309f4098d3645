/**
 * Global setup of the workers project: starts the real local container runtime on loopback (it
 * spawns real container servers, one per sandbox). workerd's own container client runs the Durable
 * Objects' containers through its Docker engine (engine-router.ts, workerd-on-engine.sh), and the
 * Worker reaches what only the runtime offers at its URL (the SANDBOX_CONTAINER_URL binding, with its
 * secret as SANDBOX_RUNTIME_SECRET). Sandboxes live in a temporary folder removed afterwards.
 *
 * A second runtime whose container servers find no bubblewrap (a machine without it) lets tests see
 * how a sandbox that asks for bwrap there fails; a third, whose operator confines every sandbox with
 * bwrap, how the operator's floor holds against API callers; a fourth, which runs one sandbox at most,
 * how its limit reaches them. A server on loopback stands for the internet that the Worker's outbound
 * handler sends allowed requests to (egress-target.ts): the main runtime's test name map sends
 * EGRESS_TARGET_NAME on port 80 there, for the sandboxes whose requests the runtime carries.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import type { TestProject } from "vitest/node";
import { startRuntime } from "../../runtime/server.ts";
import { newSecret } from "../../server-kit/http/bearer.ts";
import { EGRESS_TARGET_NAME, startEgressTarget } from "./egress-target.ts";
import { startEngineRouter } from "./engine-router.ts";

declare module "vitest" {
  export interface ProvidedContext {
    runtimeUrl: string;
    /** Where a test sends a sandbox's container to another runtime's engine (engine-router.ts). */
    engineRouterUrl: string;
    /** The runtimes' API as the Worker calls it (SANDBOX_CONTAINER_URL): each sandbox's calls go to its runtime. */
    runtimeApiUrl: string;
    /** A host folder the main runtime lets sandboxes mount. */
    sharedDir: string;
    noBwrapRuntimeUrl: string;
    bwrapRuntimeUrl: string;
    oneSandboxRuntimeUrl: string;
    runtimeSecret: string;
    ephemeralRuntimeUrl: string;
    egressTargetUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(tmpdir(), "sandbox-test-"));
  // Sandbox containers run as other host users: they pass through (never list) the folder to their own.
  chmodSync(dataDir, 0o711);
  // One secret for both runtimes: the Worker has one binding, and tests point sandboxes at either.
  const secret = newSecret();
  // The operator asks for none: sandboxes run unconfined unless they ask for bwrap, and may mount
  // host paths from the test folder.
  // Host folders sandboxes may mount: outside the data folder (no sandbox may mount another's files).
  const sharedDir = mkdtempSync(join(tmpdir(), "sandbox-shared-"));
  chmodSync(sharedDir, 0o755);
  // Twice the default cap: the files run two at a time, and some keep sandboxes busy on purpose
  // (keepAlive, servers left running) while others start theirs.
  // The stand-in for the internet: the Worker's outbound handler reaches it by the name EGRESS_TARGET_NAME, which the
  // main runtime (the carrier of what the handler lets through, locally) sends there.
  const egressTarget = await startEgressTarget();
  const egressTestHosts = { hosts: { [`${EGRESS_TARGET_NAME}:80`]: new URL(egressTarget.url).host } };
  const runtime = await startRuntime({ dataDir, isolation: "none", allowedPaths: [dataDir, sharedDir], maxContainers: 64, stopGraceMs: 1_000, secret, egressTestHosts });
  const noBwrap = await startRuntime({
    dataDir: join(dataDir, "no-bwrap"),
    isolation: "none",
    stopGraceMs: 1_000,
    bwrapPath: "/nonexistent/bwrap",
    secret,
  });
  const bwrapOnly = await startRuntime({ dataDir: join(dataDir, "bwrap-only"), isolation: "bwrap", stopGraceMs: 1_000, secret });
  const oneOnly = await startRuntime({ dataDir: join(dataDir, "one-only"), isolation: "none", maxContainers: 1, stopGraceMs: 1_000, secret });
  project.provide("runtimeUrl", runtime.url);
  project.provide("sharedDir", sharedDir);
  project.provide("bwrapRuntimeUrl", bwrapOnly.url);
  project.provide("oneSandboxRuntimeUrl", oneOnly.url);
  project.provide("runtimeSecret", secret);
  project.provide("noBwrapRuntimeUrl", noBwrap.url);
  // Containers whose workspace starts empty each time, as on Cloudflare: what durable workspaces restore.
  const ephemeral = await startRuntime({ dataDir: join(dataDir, "ephemeral"), isolation: "none", ephemeralWorkspaces: true, stopGraceMs: 1_000, secret });
  project.provide("ephemeralRuntimeUrl", ephemeral.url);
  // workerd's own container client runs every sandbox's container: through the router, on the engine
  // of the runtime a test sent its sandbox to, else the main runtime's (workerd-on-engine.sh says how).
  const runtimes = { main: runtime, noBwrap, bwrapOnly, oneOnly, ephemeral };
  const routed = Object.fromEntries(Object.entries(runtimes).map(([name, { engine, url }]) => [name, { engine: engine.path, url }]));
  const router = await startEngineRouter(join(dataDir, "engine-router.sock"), routed, "main");
  const hostRun = join(dataDir, "host-run");
  mkdirSync(hostRun);
  Object.assign(process.env, {
    MINIFLARE_WORKERD_PATH: fileURLToPath(new URL("./workerd-on-engine.sh", import.meta.url)),
    SANDBOX_TEST_WORKERD: (createRequire(import.meta.url)("workerd") as { default: string }).default,
    SANDBOX_TEST_ENGINE_SOCKET: router.path,
    SANDBOX_TEST_HOST_RUN: hostRun,
  });
  project.provide("engineRouterUrl", router.controlUrl);
  project.provide("runtimeApiUrl", router.apiUrl);
  project.provide("egressTargetUrl", egressTarget.url);
  return async () => {
    await router.close();
    await Promise.all([runtime.close(), noBwrap.close(), bwrapOnly.close(), oneOnly.close(), ephemeral.close(), egressTarget.close()]);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sharedDir, { recursive: true, force: true });
  };
}
