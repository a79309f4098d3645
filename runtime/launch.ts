/**
 * How the runtime launches one container server: the seam for isolation. Everything a container
 * server needs to know about its sandbox reaches it as environment variables (PORT, WORKSPACE,
 * SANDBOX_ID, ...); an isolation strategy may wrap the command (e.g. bubblewrap) and remap paths,
 * but gets the same spec. Only "none" exists today: a plain child process with its own workspace.
 */
import { fileURLToPath } from "node:url";

export interface LaunchSpec {
  /** Sandbox key (validated sandbox id or Durable Object id). */
  key: string;
  /** Loopback port the container server must listen on. */
  port: number;
  /** `.sandbox/<key>`: everything that belongs to this sandbox lives below it. */
  sandboxDir: string;
  workspace: string;
  home: string;
  /** The container's env vars as the Durable Object asked (Container `envVars`). */
  env: Record<string, string>;
  enableInternet: boolean;
}

export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface Isolation {
  readonly name: string;
  launch(spec: LaunchSpec): Launch;
}

export const CONTAINER_SERVER_ENTRY = fileURLToPath(new URL("../container/main.ts", import.meta.url));

/** Variables the container server reads; the sandbox's own env vars may not override them. */
export function serverEnv(spec: LaunchSpec, isolation: string): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const name of ["PATH", "LANG", "LC_ALL", "TZ"]) {
    const value = process.env[name];
    if (value !== undefined) inherited[name] = value;
  }
  return {
    ...inherited,
    HOME: spec.home,
    ...spec.env,
    PORT: String(spec.port),
    HOST: "127.0.0.1",
    WORKSPACE: spec.workspace,
    SANDBOX_ID: spec.key,
    SANDBOX_ISOLATION: isolation,
    SANDBOX_ENABLE_INTERNET: spec.enableInternet ? "1" : "0",
  };
}

/** No isolation: the container server runs as a child of the runtime, confined only by convention. */
export const noIsolation: Isolation = {
  name: "none",
  launch(spec) {
    return {
      command: process.execPath,
      args: [CONTAINER_SERVER_ENTRY],
      env: serverEnv(spec, "none"),
      cwd: spec.workspace,
    };
  },
};

const strategies: Record<string, Isolation> = { none: noIsolation };

/** Looks up an isolation strategy by name (env SANDBOX_ISOLATION); unknown names are an error. */
export function isolationByName(name: string | undefined): Isolation {
  const strategy = strategies[name ?? "none"];
  if (!strategy) {
    throw new Error(`Unknown isolation "${name}". Known: ${Object.keys(strategies).join(", ")}`);
  }
  return strategy;
}

/** Lets an isolation strategy defined elsewhere (e.g. bubblewrap) register itself by name. */
export function registerIsolation(strategy: Isolation): void {
  strategies[strategy.name] = strategy;
}
