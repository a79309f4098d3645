/**
 * The server's own environment, scrubbed. A container (or the local runtime) starts the server with
 * whatever it was given — often secrets. Commands never inherit it (engine/environment.ts builds
 * theirs), but a command running as the same user can still read /proc/<server pid>/environ, which
 * is the environment the server was exec'd with. So main.ts re-executes the server with only the
 * variables it (or Node) reads: changing process.env later would not change that file.
 */
// Names only (no zod): this runs in the server's first process, before it re-executes itself.
import { ASSIGNMENT_FROM_STDIN_VAR, CA_BUNDLE_VAR, ISOLATION_ENV, LISTEN_FD_VAR, RUN_TAG_VAR, SECRET_FROM_STDIN_VAR } from "../../protocol/server-env-names.ts";

/** Every variable the server reads, by name. Anything else is dropped. */
export const SERVER_ENV_NAMES: ReadonlySet<string> = new Set([
  // main.ts
  "PORT",
  "HOST",
  "WORKSPACE",
  "SANDBOX_HOME",
  "SANDBOX_BUNDLE",
  LISTEN_FD_VAR,
  SECRET_FROM_STDIN_VAR,
  ASSIGNMENT_FROM_STDIN_VAR,
  // services/options.ts, server-kit/isolation-config.ts, server-kit/detect-isolation.ts
  ...Object.values(ISOLATION_ENV),
  "SANDBOX_STATE_DIR",
  "SANDBOX_MAX_UPLOAD_BYTES",
  "SANDBOX_BWRAP_PATH",
  // server.ts: the trust bundle commands are pointed at, where outbound TLS is intercepted.
  CA_BUNDLE_VAR,
  // interpreter/languages.ts: the interpreters of code contexts
  "SANDBOX_PYTHON",
  "SANDBOX_WARM_CODE",
  "SANDBOX_NODE",
  // The local runtime finds the server it started (and its leftovers) by this tag in /proc/<pid>/environ.
  RUN_TAG_VAR,
  // Commands' base environment (engine/environment.ts), program lookup, temporary files, locale.
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  // Set by whatever changed into the working directory before the server (bwrap's --chdir).
  "PWD",
  // Node itself.
  "NODE_OPTIONS",
  "NODE_ENV",
]);

/** The subset of `env` the server reads. */
export function serverEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && SERVER_ENV_NAMES.has(name)) kept[name] = value;
  }
  return kept;
}

/** Whether `env` holds anything the server does not read (and so should not be exposed). */
export function hasForeignVariables(env: NodeJS.ProcessEnv): boolean {
  return Object.keys(env).some((name) => !SERVER_ENV_NAMES.has(name));
}
