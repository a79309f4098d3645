/**
 * The environment commands see. Never the server's own environment (it may hold secrets and
 * toolchain noise): a small base, then the sandbox-level variables, then the per-call ones.
 */

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

let base: Record<string, string> = {
  PATH: process.env.PATH || DEFAULT_PATH,
  HOME: process.env.HOME || "/root",
  LANG: process.env.LANG || "C.UTF-8",
};

/** Sandbox-level variables, shared by every command in this container. */
const sandboxEnv = new Map<string, string>();

/** Sets the base (PATH, HOME, LANG …); the server calls this once at start with its workspace/home. */
export function setBaseEnv(vars: Record<string, string>): void {
  base = { ...vars };
}

export function getBaseEnv(): Readonly<Record<string, string>> {
  return base;
}

/** Merges into the sandbox env; a value of `undefined` removes that variable. */
export function setSandboxEnv(vars: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(vars)) {
    if (value === undefined) sandboxEnv.delete(name);
    else sandboxEnv.set(name, value);
  }
}

export function getSandboxEnv(): Record<string, string> {
  return Object.fromEntries(sandboxEnv);
}

export function clearSandboxEnv(): void {
  sandboxEnv.clear();
}

/** base ← sandbox env ← per-call env (later wins). */
export function buildCommandEnv(callEnv: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const [name, value] of sandboxEnv) env[name] = value;
  if (callEnv) Object.assign(env, callEnv);
  return env;
}

export { DEFAULT_PATH };
