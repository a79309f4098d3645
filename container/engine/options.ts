/**
 * Request bodies → one normalised description of a command (CommandSpec), decided once: shell or
 * direct exec, time limit, encodings, stdin bytes, retention and capture sizes.
 */
import { effectiveTimeout, normaliseEncoding } from "../../protocol/process.ts";
import type { ExecRequest, OutputEncoding, StartProcessRequest } from "../../protocol/process.ts";
import type { CommandEnvVars } from "../../protocol/sessions.ts";
import type { ServerLimits } from "../config.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { commandSessionOf, isolatedInSession } from "../../protocol/sessions.ts";
import { fingerprintOf } from "./run-keys.ts";

export interface CommandSpec {
  kind: "exec" | "background";
  command: string;
  /** Direct exec of `command` with these arguments; undefined → `bash -c command`. */
  args: string[] | undefined;
  env: CommandEnvVars | undefined;
  cwd: string | undefined;
  /** The session it runs in (the default session unless it named another or asked to be isolated); undefined: none. */
  sessionId: string | undefined;
  processId: string | undefined;
  /** Names the run for retries (protocol/idempotency.ts); a caller's processId does too. */
  idempotencyKey?: string | undefined;
  /** What a caller asked, as a digest: a retry attaches only to a run asked for the same way (none: the server's own runs). */
  fingerprint?: string | undefined;
  encoding: OutputEncoding;
  timeoutMs: number | undefined;
  /** exec: bytes fed to stdin then EOF (undefined → /dev/null). */
  stdin: Buffer | undefined;
  /** Keep a stdin pipe open for later writes (background processes always; an exec when asked), after `stdin` if given. */
  keepStdinOpen: boolean;
  autoCleanup: boolean;
  /** Whether this process, while it runs, keeps the sandbox awake (a caller may opt a background process out). */
  keepAlive?: boolean | undefined;
  logRetentionBytes: number;
  /** Buffered exec: per-stream cap of the captured result (undefined: nothing captured). */
  captureBytes: number | undefined;
  killOnDisconnect: boolean;
}

/**
 * A buffered exec's log is small: its output goes into the (capped) result, and the log only serves
 * a late look at the record. Small windows also let output buffers die young, which keeps the GC
 * cheap. A streamed exec's log retains what a process log does: besides the output its reader has
 * not read yet, it holds what was sent but may not have arrived, for a reader that reconnects.
 */
const BUFFERED_EXEC_LOG_RETENTION = 1024 * 1024;

/** What every way of running a command reads the same way from its request. */
function commandFields(req: ExecRequest | StartProcessRequest) {
  if (isolatedInSession(req)) {
    throw new ServiceError("INVALID_REQUEST", "a command runs either in a session (sessionId) or isolated, not both", { sessionId: req.sessionId });
  }
  return {
    command: req.command,
    args: req.args,
    env: req.env,
    cwd: req.cwd,
    sessionId: commandSessionOf(req),
    processId: req.processId,
    idempotencyKey: req.idempotencyKey,
    encoding: normaliseEncoding(req.encoding),
    timeoutMs: effectiveTimeout(req),
  };
}

export function execSpec(req: ExecRequest, limits: ServerLimits, mode: "buffered" | "stream"): CommandSpec {
  return {
    kind: "exec",
    ...commandFields(req),
    fingerprint: fingerprintOf(`exec/${mode}`, req),
    stdin: req.stdin === undefined ? undefined : decodeInput(req.stdin, req.stdinEncoding, limits.maxStdinBytes),
    keepStdinOpen: req.keepStdinOpen ?? false,
    autoCleanup: true,
    logRetentionBytes: mode === "stream" ? limits.defaultLogRetentionBytes : Math.min(BUFFERED_EXEC_LOG_RETENTION, limits.defaultLogRetentionBytes),
    captureBytes: mode === "buffered" ? (req.maxOutputBytes ?? limits.defaultExecOutputBytes) : undefined,
    killOnDisconnect: req.killOnDisconnect ?? false,
  };
}

export function startSpec(req: StartProcessRequest, limits: ServerLimits): CommandSpec {
  return {
    kind: "background",
    ...commandFields(req),
    fingerprint: fingerprintOf("background", req),
    stdin: undefined,
    keepStdinOpen: true,
    autoCleanup: req.autoCleanup ?? true,
    keepAlive: req.keepAlive ?? true,
    logRetentionBytes: req.logRetentionBytes ?? limits.defaultLogRetentionBytes,
    captureBytes: undefined,
    killOnDisconnect: false,
  };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes base64 text sent in a request (stdin data, file content): whitespace is allowed, anything
 * else that is not base64 is refused with INVALID_REQUEST rather than decoded to garbage.
 */
export function decodeBase64(text: string, what: string): Buffer {
  const compact = text.replace(/\s+/g, "");
  if (compact.length % 4 === 1 || !BASE64.test(compact)) throw new ServiceError("INVALID_REQUEST", `${what} is not valid base64`);
  return Buffer.from(compact, "base64");
}

/** Decodes stdin text (utf8 or base64), enforcing the stdin size limit on the decoded bytes. */
export function decodeInput(data: string, encoding: string | undefined, maxBytes: number): Buffer {
  // A cheap refusal before encoding: UTF-16 length ≤ UTF-8 length. (Base64 is decoded first; the
  // request body limit bounds it.)
  if (encoding !== "base64" && data.length > maxBytes) throw stdinTooLarge(maxBytes);
  const bytes = encoding === "base64" ? decodeBase64(data, "stdin data") : Buffer.from(data, "utf8");
  if (bytes.length > maxBytes) throw stdinTooLarge(maxBytes);
  return bytes;
}

function stdinTooLarge(maxBytes: number): ServiceError {
  return new ServiceError("PAYLOAD_TOO_LARGE", `stdin is larger than ${maxBytes} bytes`, { maxBytes });
}
