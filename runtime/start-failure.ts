/**
 * Why a container server exited before it listened, read from its output. A server refuses to start
 * when its isolation cannot be had (ISOLATION_UNAVAILABLE) or is misconfigured (INVALID_REQUEST) and
 * prints the error with its code; the runtime reports that code, not a generic start failure.
 */
import type { ErrorCode } from "../protocol/errors.ts";

const REFUSALS = ["ISOLATION_UNAVAILABLE", "INVALID_REQUEST"] as const satisfies readonly ErrorCode[];

export interface StartRefusal {
  code: (typeof REFUSALS)[number];
  message: string;
}

export function startRefusalOf(output: string): StartRefusal | undefined {
  const code = REFUSALS.find((candidate) => new RegExp(`\\b${candidate}\\b`).test(output));
  if (!code) return undefined;
  // Node prints an uncaught error as "<Name>: <message>"; a server may also print "[CODE] message".
  const line =
    new RegExp(`\\[${code}\\]\\s*(.+)`).exec(output)?.[1] ??
    /^\w*Error: (.+)$/m.exec(output)?.[1] ??
    `the container server refused to start (${code})`;
  return { code, message: line.trim() };
}
