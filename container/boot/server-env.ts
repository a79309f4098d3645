/**
 * The server's own environment, scrubbed, and the image's environment, which commands start from.
 *
 * A container (or the local runtime) starts the server with whatever it was given. Commands never
 * inherit the server's environment as such (engine/environment.ts builds theirs), but a command
 * running as the same user can still read /proc/<server pid>/environ, the environment the server was
 * exec'd with. So main.ts re-executes the server with only what it keeps: changing process.env later
 * would not change that file.
 *
 * What it keeps: the variables it reads, and, where IMAGE_ENV_VAR says the environment is its
 * image's (the image's start script, the local runtime), every other variable too. Those are the
 * image's ENV (and what the platform adds to every container): commands see them, as a command in
 * the image would, so the server's environ shows nothing they do not. The one rule for commands:
 * the image's environment is the server's, less the server's own names (isServerOwnName). Nothing
 * secret comes by environment: the run secret and a sandbox's settings arrive on stdin.
 */
// Names only (no zod): this runs in the server's first process, before it re-executes itself.
import { ASSIGNMENT_FROM_STDIN_VAR, CA_BUNDLE_VAR, ENGINE_SERVER_SECRET_VAR, IMAGE_ENV_VAR, ISOLATION_ENV, LISTEN_FD_VAR, REHEARSE_VAR, RUN_TAG_VAR, SECRET_FROM_STDIN_VAR } from "../../protocol/server-env-names.ts";

/** What the server reads that is the image's as much as its own: commands get these from the image too. */
const SHARED_WITH_COMMANDS = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"];

/**
 * The server's own variables: what it reads for itself. None of them reaches a command from the
 * image (HOME is the server's SANDBOX_HOME; NODE_OPTIONS and NODE_ENV steer the server's Node, and a
 * production NODE_ENV would make a command's `npm install` skip development dependencies).
 */
export const SERVER_OWN_NAMES: ReadonlySet<string> = new Set([
  // main.ts
  "PORT",
  "HOST",
  "WORKSPACE",
  "SANDBOX_HOME",
  "SANDBOX_BUNDLE",
  LISTEN_FD_VAR,
  SECRET_FROM_STDIN_VAR,
  ASSIGNMENT_FROM_STDIN_VAR,
  REHEARSE_VAR,
  IMAGE_ENV_VAR,
  ENGINE_SERVER_SECRET_VAR,
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
  // Commands get a tag of their own below it (engine/).
  RUN_TAG_VAR,
  // Commands' HOME is the server's choice (SANDBOX_HOME, else the workspace).
  "HOME",
  // Set by whatever changed into the working directory before the server (bwrap's --chdir).
  "PWD",
  // Node itself.
  "NODE_OPTIONS",
  "NODE_ENV",
]);

/** Whether `name` is the server's (or its runtime's: every SANDBOX_ name is reserved to them), never a command's from the image. */
export function isServerOwnName(name: string): boolean {
  return SERVER_OWN_NAMES.has(name) || name.startsWith("SANDBOX_");
}

/** Every variable the server reads, by name. */
export const SERVER_ENV_NAMES: ReadonlySet<string> = new Set([...SERVER_OWN_NAMES, ...SHARED_WITH_COMMANDS]);

/** Whether `env` says it is the image's (see IMAGE_ENV_VAR). */
function isImageEnvironment(env: NodeJS.ProcessEnv): boolean {
  return env[IMAGE_ENV_VAR] === "1";
}

/** What the server keeps of `env`: what it reads, and all of an image's environment. */
export function serverEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const image = isImageEnvironment(env);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (image || SERVER_ENV_NAMES.has(name))) kept[name] = value;
  }
  return kept;
}

/** Whether `env` holds anything the server does not keep (and so should not be exposed). */
export function hasForeignVariables(env: NodeJS.ProcessEnv): boolean {
  return !isImageEnvironment(env) && Object.keys(env).some((name) => !SERVER_ENV_NAMES.has(name));
}

/** The image's environment every command starts from: none unless `env` is an image's, then all but the server's own. */
export function imageEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  if (!isImageEnvironment(env)) return {};
  const image: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isServerOwnName(name)) image[name] = value;
  }
  return image;
}
