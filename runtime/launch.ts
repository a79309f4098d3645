/**
 * How the runtime launches one container server. Everything a server needs to know about its
 * sandbox reaches it as environment variables: PORT, WORKSPACE, SANDBOX_ID, and the isolation of its
 * commands (SANDBOX_ISOLATION=none|bwrap and the other protocol/isolation.ts variables, which the
 * server enforces itself). A Launcher may also wrap the server command as a whole (e.g. to confine
 * the server, not only its commands); the default runs it as a plain child process.
 *
 * The sandbox's env vars are the container's env, as on the platform, with one difference: locally
 * the server itself runs outside the walls, so variables that steer the server process (its own
 * SANDBOX_* settings, NODE_*, LD_*, PATH, where it finds bubblewrap) are not taken from them.
 * Commands still see every sandbox env var: the Durable Object sets them through the env API.
 *
 * Under both lies the image's environment (image-env.ts), as a built image's container starts with
 * it, less what would steer the server here too; IMAGE_ENV_VAR tells the server that every command
 * starts from it.
 *
 * A launcher that can start a server before its sandbox is known (`unassigned`) lets the runtime keep
 * warm servers: such a server boots with a small environment of its own and is handed the very
 * environment `serverEnv` gives a sandbox on its stdin (protocol ServerAssignment). The default
 * launcher starts every server that way, warm or not, so a warm server's walls are a cold one's.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BUNDLE_ENTRY } from "../server-kit/bundle-layout.ts";
import type { IsolationMode } from "../protocol/isolation.ts";
import { ASSIGNMENT_FROM_STDIN_VAR, IMAGE_ENV_VAR } from "../protocol/runtime.ts";
import { imageEnv } from "./image-env.ts";
import { serverNodeFlags } from "../server-kit/node-flags.ts";

export interface LaunchSpec {
  /** Sandbox key (validated sandbox id or Durable Object id). */
  key: string;
  /** Loopback port the container server must listen on. */
  port: number;
  /** `.sandbox/<key>`: everything that belongs to this sandbox lives below it. */
  sandboxDir: string;
  workspace: string;
  /** The container's env vars as the Durable Object asked (Container `envVars`). */
  env: Record<string, string>;
  enableInternet: boolean;
  /** Isolation the server applies to its commands. */
  isolation: IsolationMode;
  /** The server env vars that carry the isolation (runtime/isolation.ts): written last. */
  isolationEnv: Record<string, string>;
}

export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Descriptors the launched program gets from fd 4 on, in order (a container's listening socket, bwrap's options, bind handles). */
  fds?: number[];
  /** The host user it runs as (a root runtime's containers each have their own). */
  user?: { uid: number; gid: number };
  /** How far below the launched program the server runs (in a container, under bwrap and its init: 2). */
  serverDepth?: number;
  /** The loopback port the server serves on, when the launch brings its own listening socket. */
  port?: number;
}

export interface Launcher {
  readonly name: string;
  launch(spec: LaunchSpec): Launch;
  /** A server that boots in `dir` and waits for its ServerAssignment on stdin (see above). */
  unassigned?(dir: string): Promise<Launch>;
}

export const CONTAINER_SERVER_ENTRY = fileURLToPath(new URL("../container/main.ts", import.meta.url));

/** Server env vars a sandbox's env vars may not set (they would steer the unconfined server process). */
export function isServerControlVar(name: string): boolean {
  return /^(SANDBOX_|NODE_|LD_)/.test(name) || ["PATH", "PORT", "HOST", "WORKSPACE"].includes(name);
}

/** What every server starts from: the runtime's program lookup, locale and time zone. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "LANG", "LC_ALL", "TZ"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * The container's environment as a sandbox's server is handed it: `base`, then the image's and the
 * sandbox's env vars without what would steer the server (the caller then adds what the runtime decides).
 */
export function containerEnv(sandboxEnv: Record<string, string>, base: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const [name, value] of Object.entries({ ...imageEnv(), ...sandboxEnv })) if (!isServerControlVar(name)) env[name] = value;
  env[IMAGE_ENV_VAR] = "1";
  return env;
}

/** The server's environment: a small base, the image's and the sandbox's env vars, then what the runtime decides. */
export function serverEnv(spec: LaunchSpec): Record<string, string> {
  return {
    ...containerEnv(spec.env, baseEnv()),
    PORT: String(spec.port),
    HOST: "127.0.0.1",
    WORKSPACE: spec.workspace,
    SANDBOX_ID: spec.key,
    // Last, so nothing above can loosen it.
    ...spec.isolationEnv,
  };
}

let bundle: Promise<string | undefined> | undefined;

/** The container's build step, loaded only when a bundle is asked for: the runtime shares no code with the container server. */
const BUNDLER = "../container/boot/bundle.ts";

/**
 * The server's bundle (container/boot/bundle.ts: the folder the image's /app holds), made once per
 * runtime: started on its entry with its flags and a scrubbed environment, the server boots once
 * instead of re-executing itself. Undefined where it cannot be made (then a server starts from the
 * TypeScript sources, and containers cannot start).
 */
export function serverBundle(): Promise<string | undefined> {
  bundle ??= (import(BUNDLER) as Promise<typeof import("../container/boot/bundle.ts")>).then(({ bundleServer }) => bundleServer()).catch((error: Error) => {
    console.error(`runtime: container servers start from TypeScript sources (the server's bundle could not be made: ${error.message})`);
    return undefined;
  });
  return bundle;
}

/** The server's entry: the bundle's, else the TypeScript one (which then re-executes on its own). */
export async function serverEntry(): Promise<string> {
  const dir = await serverBundle();
  return dir === undefined ? CONTAINER_SERVER_ENTRY : join(dir, BUNDLE_ENTRY);
}

/** The default: the container server as a plain child process of the runtime, told its sandbox on stdin. */
export const directLauncher: Launcher = {
  name: "direct",
  launch(spec) {
    return { command: process.execPath, args: [CONTAINER_SERVER_ENTRY], env: serverEnv(spec), cwd: spec.workspace };
  },
  async unassigned(dir) {
    const entry = await serverEntry();
    const flags = entry === CONTAINER_SERVER_ENTRY ? [] : serverNodeFlags([]);
    return { command: process.execPath, args: [...flags, entry], env: { ...baseEnv(), [ASSIGNMENT_FROM_STDIN_VAR]: "1" }, cwd: dir };
  },
};
