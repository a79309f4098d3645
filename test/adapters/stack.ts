/**
 * Global setup of the adapters project: one `npm start` stack (local container runtime + wrangler dev
 * on free ports) for every adapter test file, so each file drives the real service over HTTP without
 * booting its own. Hands the URL and API token to the tests; stops the stack with one Ctrl-C.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { freePort } from "../../runtime/ports.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the Worker serving /v1. */
    stackUrl: string;
    stackToken: string;
  }
}

const root = fileURLToPath(new URL("../..", import.meta.url));
const READY_TIMEOUT_MS = 100_000;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(tmpdir(), "sandbox-adapters-"));
  const token = `adapters-${Math.random().toString(36).slice(2)}-token`;
  const port = await freePort();
  const stack = spawn(process.execPath, [join(root, "scripts/start.ts")], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      SANDBOX_API_TOKEN: token,
      SANDBOX_DATA_DIR: join(dataDir, "sandboxes"),
      WRANGLER_PERSIST_TO: join(dataDir, "state"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stop = () => stopStack(stack).finally(() => rmSync(dataDir, { recursive: true, force: true }));
  try {
    await ready(stack);
  } catch (error) {
    await stop();
    throw error;
  }
  project.provide("stackUrl", `http://127.0.0.1:${port}`);
  project.provide("stackToken", token);
  return stop;
}

function ready(stack: ChildProcess): Promise<void> {
  let output = "";
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the stack was not ready in time:\n${output}`)), READY_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Sandbox service ready")) {
        clearTimeout(timer);
        stack.stdout!.off("data", onData);
        stack.stderr!.off("data", onData);
        stack.stdout!.resume();
        stack.stderr!.resume();
        resolve();
      }
    };
    stack.stdout!.on("data", onData);
    stack.stderr!.on("data", onData);
    stack.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the stack exited (${code}) before it was ready:\n${output}`));
    });
  });
}

async function stopStack(stack: ChildProcess): Promise<void> {
  if (stack.exitCode !== null || stack.signalCode !== null) return;
  const exited = new Promise((resolve) => stack.once("exit", resolve));
  stack.kill("SIGINT");
  const timer = setTimeout(() => stack.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}
