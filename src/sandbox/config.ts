/**
 * A sandbox's settings as the Durable Object keeps them (in storage, so they outlive both the
 * Durable Object's eviction and the container): sleepAfter, the sandbox env vars (configure() and
 * setEnvVars() both write them) and the isolation the local runtime starts the container with.
 */
import { ISOLATION_REQUEST_FIELDS, type IsolationRequest, type IsolationSupport } from "../../protocol/isolation.ts";
import type { SandboxConfig } from "../rpc/sandbox.ts";

export const CONFIG_KEY = "sandbox:config";

export function isolationOf(config: SandboxConfig): IsolationRequest {
  const picked: Record<string, unknown> = {};
  for (const field of ISOLATION_REQUEST_FIELDS) if (config[field] !== undefined) picked[field] = config[field];
  return picked as IsolationRequest;
}

export function sameIsolation(a: SandboxConfig, b: SandboxConfig): boolean {
  const left = isolationOf(a);
  const right = isolationOf(b);
  return ISOLATION_REQUEST_FIELDS.every((field) => JSON.stringify(left[field]) === JSON.stringify(right[field]));
}

/** The env vars after an update: values set, nulls removed. */
export function updatedEnv(current: Record<string, string> | undefined, update: Record<string, string | null>): Record<string, string> {
  const next = { ...current };
  for (const [name, value] of Object.entries(update)) {
    if (value === null) delete next[name];
    else next[name] = value;
  }
  return next;
}

/** What a container that already has the wanted vars (`applied`) must be told: new values, and nulls to unset. */
export function envChanges(applied: Record<string, string>, wanted: Record<string, string>): Record<string, string | null> {
  const vars: Record<string, string | null> = {};
  for (const name of Object.keys(applied)) if (!(name in wanted)) vars[name] = null;
  for (const [name, value] of Object.entries(wanted)) if (applied[name] !== value) vars[name] = value;
  return vars;
}

/** detectIsolation() on Cloudflare, where the container is the wall and the isolation options are not used. */
export const PLATFORM_ISOLATION: IsolationSupport = {
  none: { available: true },
  bwrap: { available: false, reason: "on Cloudflare each sandbox is its own container; native isolation is for the local runtime" },
};
