/**
 * Global setup of the stack project: one `npm start` stack (local container runtime + wrangler dev
 * on free ports) for every stack test file, so each file drives the real service over HTTP without
 * booting its own. Vitest runs the projects' global setups one after another before any test, so
 * this one does not wait for the stack: it hands out the URL, token and log file at once, and each
 * test file waits for the stack to answer (test/stack/ready.ts). One Ctrl-C stops it at the end.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { freePort } from "../../runtime/ports.ts";
import { STACK_EXITED } from "./stack-log.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the Worker serving /v1. */
    stackUrl: string;
    stackToken: string;
    /** Where the stack's output goes, for the error when it does not come up. */
    stackLog: string;
  }
}

const root = fileURLToPath(new URL("../..", import.meta.url));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(tmpdir(), "sandbox-adapters-"));
  // Sandbox containers run as other host users: they pass through (never list) the folder to their own.
  chmodSync(dataDir, 0o711);
  const log = join(dataDir, "stack.log");
  const token = `adapters-${Math.random().toString(36).slice(2)}-token`;
  const port = await freePort();
  // It says the API token: its owner's only, in a folder sandboxes pass through.
  const output = createWriteStream(log, { mode: 0o600 });
  const stack = spawn(process.execPath, [join(root, "scripts/start.ts")], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      SANDBOX_API_TOKEN: token,
      SANDBOX_DATA_DIR: join(dataDir, "sandboxes"),
      // The operator's walls for these tests: no isolation floor (sandboxes ask for bwrap themselves),
      // and /opt as the one host path sandboxes may mount.
      SANDBOX_ISOLATION: "none",
      SANDBOX_ALLOWED_PATHS: "/opt",
      WRANGLER_PERSIST_TO: join(dataDir, "state"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  stack.stdout!.pipe(output, { end: false });
  stack.stderr!.pipe(output, { end: false });
  // Said in the log, so waiting test files give up at once instead of at their deadline.
  stack.once("exit", (code, signal) => output.write(`\n${STACK_EXITED} (${code ?? signal})\n`));
  project.provide("stackUrl", `http://127.0.0.1:${port}`);
  project.provide("stackToken", token);
  project.provide("stackLog", log);
  return async () => {
    await stopStack(stack);
    output.end();
    rmSync(dataDir, { recursive: true, force: true });
  };
}

async function stopStack(stack: ChildProcess): Promise<void> {
  if (stack.exitCode !== null || stack.signalCode !== null) return;
  const exited = new Promise((resolve) => stack.once("exit", resolve));
  stack.kill("SIGINT");
  const timer = setTimeout(() => stack.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}
