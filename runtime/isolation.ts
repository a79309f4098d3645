/**
 * The isolation each container server starts with: the runtime's defaults (its SANDBOX_ISOLATION and
 * the other protocol ISOLATION_ENV variables of its own environment), overridden field by field by
 * what the sandbox asked for. The result is a set of server env vars that launch.ts writes last, after
 * the sandbox's env vars, so those can never loosen it.
 */
import { ISOLATION_ENV, ISOLATION_MODES, type IsolationMode, type IsolationRequest, type IsolationSupport } from "../protocol/isolation.ts";

/** What the runtime was started with. */
export interface RuntimeIsolation {
  /** Mode of sandboxes that do not ask for one. */
  mode: IsolationMode;
  /** bubblewrap binary handed to every server (SANDBOX_BWRAP_PATH); default: `bwrap` on PATH. */
  bwrapPath?: string;
  /** False when the operator gives no sandbox outbound network (SANDBOX_NETWORK_ALLOWED=0): a ceiling. */
  networkAllowed?: boolean;
  /** Where the defaults of the other fields are read (default: the runtime's process env). */
  env?: Record<string, string | undefined>;
}

export interface ResolvedIsolation {
  mode: IsolationMode;
  /** Server env vars carrying it (protocol ISOLATION_ENV, SANDBOX_BWRAP_PATH). */
  env: Record<string, string>;
}

export const BWRAP_PATH_VAR = "SANDBOX_BWRAP_PATH";

/**
 * The runtime's mode (SANDBOX_ISOLATION). Unset means bwrap, and where bubblewrap cannot run that is
 * an error saying how to get it: commands run unconfined only when the operator says so (`none`).
 */
export function parseIsolationMode(value: string | undefined, support: IsolationSupport): IsolationMode {
  if (value === undefined || value === "") {
    if (support.bwrap.available) return "bwrap";
    throw new Error(
      `Sandbox commands are confined with bubblewrap by default, and it cannot run here (${support.bwrap.reason}). ` +
        "Install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), " +
        "or set SANDBOX_ISOLATION=none to run commands unconfined: as this machine's user, with its files, processes and network.",
    );
  }
  if (!(ISOLATION_MODES as readonly string[]).includes(value)) {
    throw new Error(`Unknown isolation "${value}" (SANDBOX_ISOLATION): use one of ${ISOLATION_MODES.join(", ")}`);
  }
  return value as IsolationMode;
}

const flag = (value: boolean) => (value ? "1" : "0");

/**
 * `enableInternet` is the platform's switch (Container `enableInternet`) and `networkAllowed` the
 * operator's: when either is false, commands never get the network, whatever else says so. Otherwise the network is off unless the sandbox (or the
 * runtime's SANDBOX_ALLOW_NETWORK) allows it.
 */
export function resolveIsolation(defaults: RuntimeIsolation, request: IsolationRequest = {}, enableInternet = true): ResolvedIsolation {
  const base = defaults.env ?? process.env;
  const env: Record<string, string> = {};
  const mode = request.isolation ?? defaults.mode;
  env[ISOLATION_ENV.mode] = mode;

  const network =
    request.allowNetwork === undefined ? (base[ISOLATION_ENV.allowNetwork] ?? base[ISOLATION_ENV.enableInternet] ?? "0") : flag(request.allowNetwork);
  env[ISOLATION_ENV.allowNetwork] = enableInternet && defaults.networkAllowed !== false ? network : "0";
  env[ISOLATION_ENV.enableInternet] = env[ISOLATION_ENV.allowNetwork]!;

  const fields = [
    [ISOLATION_ENV.readOnlyPaths, request.readOnlyPaths],
    [ISOLATION_ENV.readWritePaths, request.readWritePaths],
    [ISOLATION_ENV.bwrapArgs, request.bwrapArgs],
    [ISOLATION_ENV.allowSystemBinaries, request.allowSystemBinaries],
  ] as const;
  for (const [name, asked] of fields) {
    if (asked !== undefined) env[name] = typeof asked === "boolean" ? flag(asked) : JSON.stringify(asked);
    else if (base[name] !== undefined && base[name] !== "") env[name] = base[name]!;
    else env[name] = "";
  }

  const bwrapPath = defaults.bwrapPath ?? base[BWRAP_PATH_VAR];
  env[BWRAP_PATH_VAR] = bwrapPath ?? "";
  return { mode, env };
}
