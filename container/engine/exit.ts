/**
 * How a process ended, in the terms every route reports: status, exit code, signal, timedOut, killed.
 * Timeout → killed, exit code 124. Death by signal N → killed, exit code 128+N.
 */
import { signalNumber, type ProcessStatus } from "../../protocol/process.ts";

export interface ExitFacts {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** The signal a kill request (or the timeout) sent, if any. */
  killSignal: string | undefined;
}

export interface ProcessExit {
  status: ProcessStatus;
  exitCode: number;
  signal?: string;
  timedOut: boolean;
  killed: boolean;
}

export const TIMEOUT_EXIT_CODE = 124;

export function describeExit({ code, signal, timedOut, killSignal }: ExitFacts): ProcessExit {
  if (timedOut) {
    return { status: "killed", exitCode: TIMEOUT_EXIT_CODE, signal: signal ?? killSignal, timedOut: true, killed: true };
  }
  if (signal !== null) {
    return { status: "killed", exitCode: 128 + (signalNumber(signal) ?? 0), signal, timedOut: false, killed: true };
  }
  const exitCode = code ?? 1;
  // Asked to die and exited on its own terms (e.g. a trap): still a kill from the caller's view.
  if (killSignal !== undefined) return { status: "killed", exitCode, signal: killSignal, timedOut: false, killed: true };
  return { status: exitCode === 0 ? "completed" : "failed", exitCode, timedOut: false, killed: false };
}
