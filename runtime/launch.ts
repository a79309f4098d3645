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
 */
import { fileURLToPath } from "node:url";
import type { IsolationMode } from "../protocol/isolation.ts";

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
}

export interface Launcher {
  readonly name: string;
  launch(spec: LaunchSpec): Launch;
}

export const CONTAINER_SERVER_ENTRY = fileURLToPath(new URL("../container/main.ts", import.meta.url));

/** Server env vars a sandbox's env vars may not set (they would steer the unconfined server process). */
export function isServerControlVar(name: string): boolean {
  return /^(SANDBOX_|NODE_|LD_)/.test(name) || ["PATH", "PORT", "HOST", "WORKSPACE"].includes(name);
}

/** The server's environment: a small base, the sandbox's env vars, then what the runtime decides. */
export function serverEnv(spec: LaunchSpec): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "LANG", "LC_ALL", "TZ"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  for (const [name, value] of Object.entries(spec.env)) if (!isServerControlVar(name)) env[name] = value;
  return {
    ...env,
    PORT: String(spec.port),
    HOST: "127.0.0.1",
    WORKSPACE: spec.workspace,
    SANDBOX_ID: spec.key,
    // Last, so nothing above can loosen it.
    ...spec.isolationEnv,
  };
}

/** The default: the container server as a plain child process of the runtime. */
export const directLauncher: Launcher = {
  name: "direct",
  launch(spec) {
    return { command: process.execPath, args: [CONTAINER_SERVER_ENTRY], env: serverEnv(spec), cwd: spec.workspace };
  },
};
