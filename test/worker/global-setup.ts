/**
 * Global setup of the workers project: starts the real local container runtime on loopback (it
 * spawns real container servers, one per sandbox), in a process of its own with its own mount
 * namespace (runtimes-process.ts), so a test run killed outright leaves no sandbox's disk mounted. workerd's own container client runs the Durable
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
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import type { TestProject } from "vitest/node";
import type { RuntimeOptions } from "../../runtime/server.ts";
import { newSecret } from "../../server-kit/http/bearer.ts";
import { EGRESS_TARGET_NAME, startEgressTarget } from "./egress-target.ts";
import { startEngineRouter } from "./engine-router.ts";
import type { StartedRuntime } from "./runtimes-process.ts";

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
  // Containers whose workspace starts empty each time (ephemeral), as on Cloudflare: what durable workspaces restore.
  const started = await startRuntimes({
    main: { dataDir, isolation: "none", allowedPaths: [dataDir, sharedDir], maxContainers: 64, stopGraceMs: 1_000, secret, egressTestHosts },
    noBwrap: { dataDir: join(dataDir, "no-bwrap"), isolation: "none", stopGraceMs: 1_000, bwrapPath: "/nonexistent/bwrap", secret },
    bwrapOnly: { dataDir: join(dataDir, "bwrap-only"), isolation: "bwrap", stopGraceMs: 1_000, secret },
    oneOnly: { dataDir: join(dataDir, "one-only"), isolation: "none", maxContainers: 1, stopGraceMs: 1_000, secret },
    ephemeral: { dataDir: join(dataDir, "ephemeral"), isolation: "none", ephemeralWorkspaces: true, stopGraceMs: 1_000, secret },
  });
  const runtimes = started.runtimes;
  project.provide("runtimeUrl", runtimes.main!.url);
  project.provide("sharedDir", sharedDir);
  project.provide("bwrapRuntimeUrl", runtimes.bwrapOnly!.url);
  project.provide("oneSandboxRuntimeUrl", runtimes.oneOnly!.url);
  project.provide("runtimeSecret", secret);
  project.provide("noBwrapRuntimeUrl", runtimes.noBwrap!.url);
  project.provide("ephemeralRuntimeUrl", runtimes.ephemeral!.url);
  // workerd's own container client runs every sandbox's container: through the router, on the engine
  // of the runtime a test sent its sandbox to, else the main runtime's (workerd-on-engine.sh says how).
  const router = await startEngineRouter(join(dataDir, "engine-router.sock"), runtimes, "main");
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
    await Promise.all([started.close(), egressTarget.close()]);
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sharedDir, { recursive: true, force: true });
  };
}

/**
 * Starts the runtimes (options by name) in a process of their own, runtimes-process.ts, and returns
 * each one's URL and engine socket once all are listening; `close` closes them and waits for the
 * process to end. Should the test run die, that process sees its stdin close and ends too.
 */
async function startRuntimes(asked: Record<string, RuntimeOptions>): Promise<{ runtimes: Record<string, StartedRuntime>; close(): Promise<void> }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("./runtimes-process.ts", import.meta.url))], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stdin.write(`${JSON.stringify(asked)}\n`);
  const line = await Promise.race([
    new Promise<string>((resolve) => createInterface({ input: child.stdout }).once("line", resolve)),
    exited.then(() => Promise.reject(new Error(`the test runtimes' process ended (${child.exitCode ?? child.signalCode}) before they listened`))),
  ]);
  return {
    runtimes: JSON.parse(line) as Record<string, StartedRuntime>,
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
}
