/** Shared bits of the workers tests: unique sandbox ids, the runtime's view of a container. */
import { env } from "cloudflare:workers";
import { inject } from "vitest";
import type { RuntimeContainerInfo } from "../../protocol/runtime.ts";
import { getSandbox } from "../../src/client/get-sandbox.ts";
import type { SandboxClient } from "../../src/client/sandbox-client.ts";
import type { GetSandboxOptions } from "../../src/client/get-sandbox.ts";

let counter = 0;
const run = Math.random().toString(36).slice(2, 8);

/** A fresh sandbox id per call, so tests never share a container. */
export function uniqueId(label: string): string {
  return `${label}-${run}-${++counter}`;
}

export function freshSandbox(label: string, options?: GetSandboxOptions): SandboxClient {
  return getSandbox(env.Sandbox, uniqueId(label), options);
}

/** What the local runtime says about a sandbox's container (independent of the Durable Object). */
export async function runtimeState(sandboxId: string): Promise<RuntimeContainerInfo> {
  const response = await fetch(`${inject("runtimeUrl")}/containers/${sandboxId}`);
  return (await response.json()) as RuntimeContainerInfo;
}

/** Polls `check` until it returns true or `timeoutMs` passes (for state only observable by asking). */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export async function collect<T>(iterable: AsyncIterable<T>, limit = Number.POSITIVE_INFINITY): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}
