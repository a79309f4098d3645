/**
 * The environment commands see. Never the server's own variables: a base (the image's environment,
 * boot/server-env.ts, with PATH, HOME, LANG … as the server decided them at start), then the
 * sandbox-level variables, then the per-call ones, where a null value unsets the variable for that command.
 * One per server: two servers in one process (tests, benchmarks) never see each other's variables.
 */
import type { CommandEnvVars } from "../../protocol/sessions.ts";

export { DEFAULT_PATH } from "../../server-kit/default-path.ts";

export class CommandEnvironment {
  /** The image's environment with PATH, HOME, LANG … as the server decided them at start. */
  readonly base: Readonly<Record<string, string>>;
  /** Sandbox-level variables, shared by every command of this server. */
  readonly #sandbox = new Map<string, string>();
  /** Bumped at every change of the sandbox env: what was started before it may be out of date. */
  version = 0;

  constructor(base: Record<string, string>) {
    this.base = { ...base };
  }

  /** Merges into the sandbox env; a value of `undefined` removes that variable. */
  setSandboxVars(vars: Record<string, string | undefined>): void {
    this.version++;
    for (const [name, value] of Object.entries(vars)) {
      if (value === undefined) this.#sandbox.delete(name);
      else this.#sandbox.set(name, value);
    }
  }

  sandboxVars(): Record<string, string> {
    return Object.fromEntries(this.#sandbox);
  }

  /** base ← sandbox env ← per-call env (later wins). */
  forCommand(callEnv: CommandEnvVars | undefined): Record<string, string> {
    const env: Record<string, string> = { ...this.base };
    for (const [name, value] of this.#sandbox) env[name] = value;
    return withCallEnv(env, callEnv);
  }
}

/** `env` with a command's own variables laid over it: a string sets, null unsets, undefined leaves as is. */
export function withCallEnv(env: Record<string, string>, callEnv: CommandEnvVars | undefined): Record<string, string> {
  for (const [name, value] of Object.entries(callEnv ?? {})) {
    if (value === null) delete env[name];
    else if (value !== undefined) env[name] = value;
  }
  return env;
}
