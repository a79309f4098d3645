/** Type guards for what comes back from a sandbox: exec results, process handles, statuses. */
import { isProcessStatus } from "../../protocol/process.ts";
import type { ExecResult } from "../../protocol/process.ts";
import type { Process } from "./api.ts";

export { isProcessStatus };

export function isExecResult(value: unknown): value is ExecResult {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.success === "boolean" && typeof v.exitCode === "number" && typeof v.stdout === "string" && typeof v.stderr === "string";
}

export function isProcess(value: unknown): value is Process {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === "string" && typeof v.command === "string" && typeof v.status === "string" && isProcessStatus(v.status);
}
