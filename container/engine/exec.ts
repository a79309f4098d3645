/**
 * The result object of a finished command (seed ExecResult). `success` is the command's success
 * (exit code 0), as in the seed; the buffered route fills stdout/stderr from the capture, the
 * streaming route leaves them empty because every byte was already sent as an event.
 */
import type { ExecResult } from "../../protocol/process.ts";
import type { ManagedProcess } from "./managed-process.ts";

export function execResultOf(record: ManagedProcess): ExecResult {
  const exit = record.exit;
  const exitCode = exit?.exitCode ?? -1;
  const encoding = record.spec.encoding;
  const result: ExecResult = {
    success: record.status === "completed",
    exitCode,
    stdout: "",
    stderr: "",
    command: record.spec.command,
    duration: record.durationMs,
    timestamp: record.startTime.toISOString(),
    processId: record.id,
  };
  if (record.spec.sessionId !== undefined) result.sessionId = record.spec.sessionId;
  if (record.pid !== undefined) result.pid = record.pid;
  if (exit?.signal !== undefined) result.signal = exit.signal;
  if (exit) {
    result.timedOut = exit.timedOut;
    result.killed = exit.killed;
  }
  if (encoding === "base64") result.encoding = "base64";
  const capture = record.capture;
  if (capture) {
    result.stdout = capture.bytes("stdout", encoding).toString(encoding);
    result.stderr = capture.bytes("stderr", encoding).toString(encoding);
    result.stdoutTruncated = capture.truncated("stdout");
    result.stderrTruncated = capture.truncated("stderr");
  }
  return result;
}
