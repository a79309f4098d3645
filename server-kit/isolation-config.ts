/**
 * Isolation settings: from `startServer()` options, else from the environment the runtime started the
 * server with (ISOLATION_ENV), else defaults (no isolation; under bwrap: no network, system binaries
 * visible read-only).
 */
import path from "node:path";
import { ISOLATION_ENV, ISOLATION_MODES, type IsolationMode, type IsolationOptions } from "../protocol/isolation.ts";
import { ServiceError } from "./service-error.ts";

export const DEFAULT_ISOLATION: IsolationOptions = {
  isolation: "none",
  allowNetwork: false,
  readOnlyPaths: [],
  readWritePaths: [],
  allowSystemBinaries: true,
  bwrapArgs: [],
};

export function resolveIsolationOptions(
  overrides: Partial<IsolationOptions> = {},
  env: Record<string, string | undefined> = process.env,
): IsolationOptions {
  const fromEnv = isolationOptionsFromEnv(env);
  const merged: IsolationOptions = { ...DEFAULT_ISOLATION, ...fromEnv };
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
  }
  if (!(ISOLATION_MODES as readonly string[]).includes(merged.isolation)) {
    throw invalid(`unknown isolation "${merged.isolation}" (known: ${ISOLATION_MODES.join(", ")})`);
  }
  for (const list of [merged.readOnlyPaths, merged.readWritePaths]) {
    for (const p of list) if (!path.isAbsolute(p)) throw invalid(`isolation paths must be absolute: ${p}`);
  }
  return {
    ...merged,
    readOnlyPaths: merged.readOnlyPaths.map((p) => path.resolve(p)),
    readWritePaths: merged.readWritePaths.map((p) => path.resolve(p)),
  };
}

export function isolationOptionsFromEnv(env: Record<string, string | undefined>): Partial<IsolationOptions> {
  const options: Partial<IsolationOptions> = {};
  const mode = env[ISOLATION_ENV.mode]?.trim();
  if (mode) options.isolation = mode as IsolationMode;
  const network = env[ISOLATION_ENV.allowNetwork] ?? env[ISOLATION_ENV.enableInternet];
  if (network !== undefined && network !== "") options.allowNetwork = parseFlag(network, ISOLATION_ENV.allowNetwork);
  const system = env[ISOLATION_ENV.allowSystemBinaries];
  if (system !== undefined && system !== "") options.allowSystemBinaries = parseFlag(system, ISOLATION_ENV.allowSystemBinaries);
  const readOnly = env[ISOLATION_ENV.readOnlyPaths];
  if (readOnly) options.readOnlyPaths = parsePathList(readOnly, ISOLATION_ENV.readOnlyPaths);
  const readWrite = env[ISOLATION_ENV.readWritePaths];
  if (readWrite) options.readWritePaths = parsePathList(readWrite, ISOLATION_ENV.readWritePaths);
  const extra = env[ISOLATION_ENV.bwrapArgs];
  if (extra) options.bwrapArgs = parseStringArray(extra, ISOLATION_ENV.bwrapArgs);
  return options;
}

function parseFlag(value: string, name: string): boolean {
  const v = value.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  throw invalid(`${name} must be 1/true or 0/false, not "${value}"`);
}

/** A JSON array of strings, or a colon-separated list. */
function parsePathList(value: string, name: string): string[] {
  const text = value.trim();
  if (text.startsWith("[")) return parseStringArray(text, name);
  return text.split(":").filter((p) => p !== "");
}

function parseStringArray(value: string, name: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw invalid(`${name} must be a JSON array of strings`);
  }
  if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === "string")) throw invalid(`${name} must be a JSON array of strings`);
  return parsed;
}

function invalid(message: string): ServiceError {
  return new ServiceError("INVALID_REQUEST", `isolation config: ${message}`);
}
