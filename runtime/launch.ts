/**
 * How the runtime launches one container server. Everything a server needs to know about its
 * sandbox reaches it as environment variables: PORT, WORKSPACE, SANDBOX_ID, and the isolation of its
 * commands (SANDBOX_ISOLATION=none|bwrap and the other protocol/isolation.ts variables, which the
 * server enforces itself). A Launcher may also wrap the server command as a whole (e.g. to confine
 * the server, not only its commands); the default runs it as a plain child process.
 */
import { fileURLToPath } from "node:url";
import { ISOLATION_ENV, ISOLATION_MODES, type IsolationMode } from "../protocol/isolation.ts";

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

/** Isolation settings of the runtime's own environment that are handed on to every server. */
const FORWARDED_ISOLATION_VARS = [
  ISOLATION_ENV.allowNetwork,
  ISOLATION_ENV.readOnlyPaths,
  ISOLATION_ENV.readWritePaths,
  ISOLATION_ENV.allowSystemBinaries,
  ISOLATION_ENV.bwrapArgs,
];

export function parseIsolationMode(value: string | undefined): IsolationMode {
  const mode = value === undefined || value === "" ? "none" : value;
  if (!(ISOLATION_MODES as readonly string[]).includes(mode)) {
    throw new Error(`Unknown isolation "${value}" (SANDBOX_ISOLATION): use one of ${ISOLATION_MODES.join(", ")}`);
  }
  return mode as IsolationMode;
}

/** The server's environment: a small base, the sandbox's env vars, then what the runtime decides. */
export function serverEnv(spec: LaunchSpec): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "LANG", "LC_ALL", "TZ", ...FORWARDED_ISOLATION_VARS]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    ...env,
    ...spec.env,
    PORT: String(spec.port),
    HOST: "127.0.0.1",
    WORKSPACE: spec.workspace,
    SANDBOX_ID: spec.key,
    [ISOLATION_ENV.mode]: spec.isolation,
    [ISOLATION_ENV.enableInternet]: spec.enableInternet ? "1" : "0",
  };
}

/** The default: the container server as a plain child process of the runtime. */
export const directLauncher: Launcher = {
  name: "direct",
  launch(spec) {
    return { command: process.execPath, args: [CONTAINER_SERVER_ENTRY], env: serverEnv(spec), cwd: spec.workspace };
  },
};
