/**
 * An `npm start` stack of a test file's own, for adapters whose framework client hardcodes the
 * production image's paths (`cd /workspace`, absolute `/workspace/...` files): the shared adapters
 * stack runs sandboxes without isolation unless they ask, where `/workspace` would be this machine's.
 * This one keeps the operator default, bwrap, so every sandbox is a container with its own
 * `/workspace`, as in production.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../runtime/ports.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const READY_TIMEOUT_MS = 150_000;

export interface OwnStack {
  url: string;
  token: string;
  stop(): Promise<void>;
}

/** `dataDir`: the folder its sandboxes and state go in (the caller's to remove); default a temporary one. */
export async function startOwnStack(label: string, options: { dataDir?: string; env?: Record<string, string> } = {}): Promise<OwnStack> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), `sandbox-${label}-`));
  // Sandbox containers run as other host users: they pass through (never list) the folder to their own.
  chmodSync(dataDir, 0o711);
  const token = `${label}-${Math.random().toString(36).slice(2)}-token`;
  const port = await freePort();
  const stack = spawn(process.execPath, [join(root, "scripts/start.ts")], {
    cwd: root,
    env: { ...process.env, PORT: String(port), SANDBOX_API_TOKEN: token, SANDBOX_DATA_DIR: join(dataDir, "sandboxes"), WRANGLER_PERSIST_TO: join(dataDir, "state"), ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => (output += chunk.toString());
  stack.stdout.on("data", collect);
  stack.stderr.on("data", collect);
  const stop = async () => {
    if (stack.exitCode === null && stack.signalCode === null) {
      const exited = new Promise((resolve) => stack.once("exit", resolve));
      stack.kill("SIGINT");
      const timer = setTimeout(() => stack.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    }
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the ${label} stack was not ready in time:\n${output}`)), READY_TIMEOUT_MS);
      stack.stdout.on("data", () => {
        if (output.includes("Sandbox service ready")) {
          clearTimeout(timer);
          resolve();
        }
      });
      stack.once("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the ${label} stack exited (${code ?? signal}):\n${output}`));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}`, token, stop };
}
