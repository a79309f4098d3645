/**
 * What an EdgeSandbox is built from: where the sandbox is (HTTP or a Worker binding), the options
 * LocalSandbox has (env, timeout, workingDirectory, isolation, nativeSandbox, instructions) and the
 * lifecycle hooks every Mastra sandbox takes. The isolation options become the sandbox's own config;
 * anything this service cannot honour is refused here, never dropped.
 */
import {
  IsolationUnavailableError,
  SandboxUnsupportedFeatureError,
  type InstructionsOption,
  type IsolationBackend,
  type MastraSandboxOptions,
  type NativeSandboxConfig,
} from "@mastra/core/workspace";
import type { SandboxConfig } from "../../client/index.ts";
import type { SandboxConnection } from "../shared/connection.ts";

export type EdgeSandboxOptions = SandboxConnection &
  Omit<MastraSandboxOptions, "processes"> & {
    /** Default time limit of `executeCommand`, in milliseconds (none when unset). */
    timeout?: number;
    /**
     * Isolation of commands: "none" or "bwrap" (bubblewrap). Where the sandbox runs in a Cloudflare
     * container, the container is the isolation and the service decides what these mean.
     */
    isolation?: IsolationBackend;
    /** Walls of the isolation: network, extra read-only and read-write paths, system binaries, raw bwrap arguments. */
    nativeSandbox?: NativeSandboxConfig;
    /** Replaces (string) or rewrites (function) what `getInstructions()` returns. */
    instructions?: InstructionsOption;
  };

/**
 * The sandbox config the isolation options stand for, or undefined when none were given (the
 * sandbox keeps whatever isolation it has).
 */
export function isolationConfig(options: Pick<EdgeSandboxOptions, "isolation" | "nativeSandbox">): SandboxConfig | undefined {
  const { isolation, nativeSandbox } = options;
  if (isolation === undefined && nativeSandbox === undefined) return undefined;
  if (isolation === "seatbelt") {
    throw new IsolationUnavailableError("seatbelt", "seatbelt is macOS-only; this sandbox offers 'bwrap' or 'none'");
  }
  const { seatbeltProfilePath, readOnly, ...walls } = nativeSandbox ?? {};
  if (seatbeltProfilePath !== undefined) {
    throw new SandboxUnsupportedFeatureError("nativeSandbox.seatbeltProfilePath is macOS-only and not supported by this sandbox", {
      option: "seatbeltProfilePath",
    });
  }
  if (readOnly !== undefined) {
    throw new SandboxUnsupportedFeatureError("nativeSandbox.readOnly is not supported by this sandbox: list writable places in readWritePaths", {
      option: "readOnly",
    });
  }
  const config: SandboxConfig = {};
  if (isolation !== undefined) config.isolation = isolation;
  if (walls.allowNetwork !== undefined) config.allowNetwork = walls.allowNetwork;
  if (walls.readOnlyPaths !== undefined) config.readOnlyPaths = [...walls.readOnlyPaths];
  if (walls.readWritePaths !== undefined) config.readWritePaths = [...walls.readWritePaths];
  if (walls.allowSystemBinaries !== undefined) config.allowSystemBinaries = walls.allowSystemBinaries;
  if (walls.bwrapArgs !== undefined) config.bwrapArgs = [...walls.bwrapArgs];
  return config;
}

/** The environment a command gets: the given variables without the unset ones. */
export function definedEnv(env: Record<string, string | undefined> | undefined): Record<string, string> | undefined {
  if (env === undefined) return undefined;
  const entries = Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}
