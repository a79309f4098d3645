/**
 * How the events of a run add up to its Execution, decided once for every side: the container builds
 * the buffered `/code/run` answer with it, and clients build `runCode`'s answer from a stream with it.
 *
 * The Execution keeps at most `maxOutputBytes` of each output stream and `maxResultsBytes` of
 * results; what goes past is dropped and the Execution says `truncated`. So a cell that prints
 * without end does not grow the memory of whoever collects its Execution.
 */
import { CODE_LIMITS, executionError, type CodeEvent, type CodeLanguage, type Execution, type ExecutionError, type Result } from "./code.ts";
import { LIMITS } from "./limits.ts";

export interface ExecutionLimits {
  /** Per stream (stdout, stderr), in UTF-8 bytes. */
  maxOutputBytes: number;
  maxResultsBytes: number;
}

export const DEFAULT_EXECUTION_LIMITS: ExecutionLimits = {
  maxOutputBytes: LIMITS.maxExecOutputBytes,
  maxResultsBytes: CODE_LIMITS.maxResultsBytes,
};

interface StreamLog {
  chunks: string[];
  bytes: number;
}

export class ExecutionBuilder {
  /** The cell's code: the events do not carry it, whoever ran it knows it. */
  readonly #code: string;
  readonly #limits: ExecutionLimits;
  #start: { executionId: string; contextId: string; language: CodeLanguage } | undefined;
  readonly #logs: Record<"stdout" | "stderr", StreamLog> = { stdout: { chunks: [], bytes: 0 }, stderr: { chunks: [], bytes: 0 } };
  readonly #results: Result[] = [];
  #resultsBytes = 0;
  #error: ExecutionError | undefined;
  #truncated = false;
  #execution: Execution | undefined;

  constructor(code: string, limits: ExecutionLimits = DEFAULT_EXECUTION_LIMITS) {
    this.#code = code;
    this.#limits = limits;
  }

  /** The run is over (`complete` was added). */
  get complete(): boolean {
    return this.#execution !== undefined;
  }

  add(event: CodeEvent): void {
    switch (event.type) {
      case "start":
        this.#start = { executionId: event.executionId, contextId: event.contextId, language: event.language };
        return;
      case "stdout":
      case "stderr":
        this.#addOutput(this.#logs[event.type], event.data);
        return;
      case "result": {
        const bytes = resultBytes(event.result);
        if (this.#resultsBytes + bytes > this.#limits.maxResultsBytes) {
          this.#truncated = true;
          return;
        }
        this.#resultsBytes += bytes;
        this.#results.push(event.result);
        return;
      }
      case "error":
        this.#error = executionError(event.error);
        return;
      case "truncated":
        this.#truncated = true;
        return;
      case "complete": {
        const start = this.#start ?? { executionId: "", contextId: "", language: "python" as const };
        const { type: _type, timestamp: _timestamp, seq: _seq, ...outcome } = event;
        this.#execution = {
          code: this.#code,
          ...start,
          results: this.#results,
          logs: { stdout: this.#logs.stdout.chunks, stderr: this.#logs.stderr.chunks },
          ...(this.#error ? { error: this.#error } : {}),
          ...outcome,
          ...(this.#truncated ? { truncated: true } : {}),
        };
        return;
      }
    }
  }

  /** The Execution, once `complete` was added (undefined before). */
  result(): Execution | undefined {
    return this.#execution;
  }

  #addOutput(log: StreamLog, text: string): void {
    const room = this.#limits.maxOutputBytes - log.bytes;
    if (room <= 0) {
      if (text.length > 0) this.#truncated = true;
      return;
    }
    const bytes = utf8Length(text);
    if (bytes <= room) {
      log.chunks.push(text);
      log.bytes += bytes;
      return;
    }
    const head = utf8Prefix(text, room);
    if (head.length > 0) log.chunks.push(head);
    log.bytes = this.#limits.maxOutputBytes;
    this.#truncated = true;
  }
}

/** What a result weighs: the length of its formats (base64 images count as their text). */
function resultBytes(result: Result): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(result)) {
    if (key === "isMainResult") continue;
    bytes += typeof value === "string" ? value.length : (JSON.stringify(value)?.length ?? 0);
  }
  return bytes;
}

/** UTF-8 length of a string without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      bytes += 2; // a surrogate pair: 4 bytes for 2 units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** The longest prefix of `text` whose UTF-8 form fits in `maxBytes`, never splitting a character. */
function utf8Prefix(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    const pair = code >= 0xd800 && code <= 0xdbff && i + 1 < text.length;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += pair ? 2 : 1;
  }
  return text.slice(0, i);
}
