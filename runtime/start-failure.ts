/**
 * Why a container server exited before it listened, read from its output. A server refuses to start
 * when its isolation cannot be had (ISOLATION_UNAVAILABLE) or is misconfigured (INVALID_REQUEST) and
 * prints the error with its code; the runtime reports that code, not a generic start failure. A
 * start that failed for want of disk (the runtime making the container's folders, or the server
 * writing at boot) is INSUFFICIENT_STORAGE, as any other write that finds the disk full.
 */
import type { ErrorCode } from "../protocol/errors.ts";
import { ServiceError } from "../server-kit/service-error.ts";

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

/** A full disk is what stopped a start: the runtime's own error says so (ENOSPC, EDQUOT), or the server's output does. */
export function diskFullOf(error: unknown, output = ""): ServiceError | undefined {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const full = errno === "ENOSPC" || errno === "EDQUOT" || /\b(ENOSPC|EDQUOT)\b|No space left on device|Disk quota exceeded/.test(output);
  if (!full) return undefined;
  return new ServiceError("INSUFFICIENT_STORAGE", `the sandbox's container cannot start: its disk is full (${(error as Error).message})`, output ? { logTail: output } : undefined);
}
