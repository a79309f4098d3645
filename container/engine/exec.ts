/**
 * The result object of a finished command (the shape of Cloudflare's Sandbox SDK ExecResult). The
 * buffered route fills stdout/stderr from the capture; the streaming route leaves them empty because
 * every byte was already sent as an event.
 *
 * `success` is decided here and nowhere else; the Durable Object and both clients pass it on as it is.
 * The rule: the command ran to its own end and exited 0, that is exit code 0 and not timed out. A
 * command that was asked to stop (kill) and still exited 0 by itself (it trapped the signal and
 * finished cleanly) succeeded: it chose its exit code, and `killed`/`signal` say that it was asked.
 * A command killed by a signal, or by its time limit, never exits 0 (128+N, 124), so never succeeds.
 * `success` is about the command, not the call: an error response is told apart by its `code`.
 *
 * An exec that ran out of its time limit (its own `timeout`, or its session's) is not a result but an
 * error, EXECUTION_TIMEOUT, decided here (execTimeoutOf) and nowhere else: the buffered route answers
 * it as a coded error, the streamed one ends with it as an `error` event. Either way it carries the
 * result so far (the output up to the kill, exit code 124, signal, duration, ids) as its context,
 * the way a failed execa call carries its partial result.
 */
import { succeeded, type ExecResult } from "../../protocol/process.ts";
import type { ManagedProcess } from "./managed-process.ts";

export function execResultOf(record: ManagedProcess): ExecResult {
  const exit = record.exit;
  const exitCode = exit?.exitCode ?? -1;
  const encoding = record.spec.encoding;
  const result: ExecResult = {
    success: exit !== undefined && succeeded(exit),
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

/** A timed-out exec as its EXECUTION_TIMEOUT error (message and the result so far); undefined for any other end. */
export function execTimeoutOf(record: ManagedProcess): { message: string; result: ExecResult } | undefined {
  if (record.exit?.timedOut !== true) return undefined;
  const after = record.spec.timeoutMs === undefined ? "" : ` after ${record.spec.timeoutMs} ms`;
  return { message: `Command timed out${after} and was killed`, result: execResultOf(record) };
}
