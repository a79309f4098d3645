/**
 * Global setup of the workers project: starts the real local container runtime on loopback (it
 * spawns real container servers, one per sandbox) and hands its URL to the Worker as the
 * SANDBOX_CONTAINER_URL binding. Sandboxes live in a temporary folder removed afterwards.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startRuntime } from "../runtime/server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    runtimeUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(tmpdir(), "sandbox-test-"));
  const runtime = await startRuntime({ dataDir, stopGraceMs: 1_000 });
  project.provide("runtimeUrl", runtime.url);
  return async () => {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
