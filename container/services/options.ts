/**
 * Options of the services around the engine (isolation, files, sessions), as `startServer` takes
 * them. Whatever a caller leaves out is read from the environment (`serviceOptionsFromEnv`).
 */
import { FILE_LIMITS } from "../../protocol/files.ts";
import type { IsolationOptions } from "../../protocol/isolation.ts";
import { isolationOptionsFromEnv } from "../../server-kit/isolation-config.ts";

/** Isolation fields (`{isolation: "bwrap", allowNetwork, readOnlyPaths, …}`), the state directory and file limits. */
export interface ServiceOptions extends Partial<IsolationOptions> {
  /** The server's private state directory (default: a fresh temporary one, removed on close). */
  stateDir?: string;
  /** Cap on one streamed upload (default FILE_LIMITS.maxStreamedFileBytes). */
  maxStreamedFileBytes?: number;
  /** Cap on a JSON read or write of a whole file (default FILE_LIMITS.maxJsonFileBytes). */
  maxJsonFileBytes?: number;
}

export function isolationFieldsOf(options: ServiceOptions): Partial<IsolationOptions> {
  const { isolation, allowNetwork, readOnlyPaths, readWritePaths, allowSystemBinaries, bwrapArgs } = options;
  return { isolation, allowNetwork, readOnlyPaths, readWritePaths, allowSystemBinaries, bwrapArgs };
}

export interface ResolvedFileLimits {
  maxStreamedFileBytes: number;
  maxJsonFileBytes: number;
}

export function fileLimitsOf(options: ServiceOptions): ResolvedFileLimits {
  return {
    maxStreamedFileBytes: options.maxStreamedFileBytes ?? FILE_LIMITS.maxStreamedFileBytes,
    maxJsonFileBytes: options.maxJsonFileBytes ?? FILE_LIMITS.maxJsonFileBytes,
  };
}

/** SANDBOX_ISOLATION, SANDBOX_ALLOW_NETWORK, … (protocol ISOLATION_ENV), SANDBOX_STATE_DIR, SANDBOX_MAX_UPLOAD_BYTES. */
export function serviceOptionsFromEnv(env: Record<string, string | undefined> = process.env): ServiceOptions {
  const options: ServiceOptions = isolationOptionsFromEnv(env);
  if (env.SANDBOX_STATE_DIR) options.stateDir = env.SANDBOX_STATE_DIR;
  const maxUpload = Number(env.SANDBOX_MAX_UPLOAD_BYTES);
  if (env.SANDBOX_MAX_UPLOAD_BYTES && Number.isSafeInteger(maxUpload) && maxUpload > 0) options.maxStreamedFileBytes = maxUpload;
  return options;
}
