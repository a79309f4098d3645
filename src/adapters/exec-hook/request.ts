/**
 * One exec-hook request checked and put in the form the sandboxes use: env entries as a record,
 * the effective time limit (the request's, else the sandbox's default, else none). A malformed
 * request is the caller's mistake, thrown as a TypeError before anything runs.
 */
import type { ExecHookRequest } from "./types.ts";

export interface PreparedRequest {
  command: string;
  args: string[];
  env: Record<string, string> | undefined;
  stdin: Uint8Array | undefined;
  /** Milliseconds; undefined: no limit. */
  timeoutMs: number | undefined;
}

export function prepareRequest(request: ExecHookRequest, defaultTimeoutMs: number | undefined): PreparedRequest {
  if (typeof request.command !== "string" || request.command === "") throw new TypeError("exec hook: command must be a non-empty string");
  if (request.args !== undefined && !request.args.every((arg) => typeof arg === "string")) throw new TypeError("exec hook: args must be strings");
  const given = request.timeoutMs;
  const timeoutMs = given !== undefined && given > 0 ? given : defaultTimeoutMs !== undefined && defaultTimeoutMs > 0 ? defaultTimeoutMs : undefined;
  return {
    command: request.command,
    args: request.args ?? [],
    env: request.env === undefined ? undefined : envRecord(request.env),
    stdin: request.stdin !== undefined && request.stdin.length > 0 ? request.stdin : undefined,
    timeoutMs,
  };
}

function envRecord(entries: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const at = typeof entry === "string" ? entry.indexOf("=") : -1;
    if (at <= 0) throw new TypeError(`exec hook: env entries are "KEY=value", got ${JSON.stringify(entry)}`);
    env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  return env;
}
