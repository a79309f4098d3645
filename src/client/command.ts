/**
 * A CommandHandle (api.ts): one command's exec events, read through a resumable stream whose cursor
 * (protocol/resume.ts) is the handle's position, turned into output chunks and a result.
 *
 * One reader at a time takes events off the stream: an iterator, or the drain behind `result` when
 * no iterator is active. So every chunk goes to exactly one of them, in order. A `break` out of an
 * iteration leaves the stream open, for the next iteration or for `result`.
 *
 * Aborting the caller's signal kills the command (a kill call by id) and ends the handle with the
 * signal's reason. A dropped connection never kills it: the stream resumes. reconnect() stops this
 * handle's stream (without killing anything) and opens a new one from the same cursor.
 */
import type { ExecEvent } from "../../protocol/events.ts";
import type { ExecResult, OutputStream } from "../../protocol/process.ts";
import { ResumeCursor } from "../../protocol/resume.ts";
import { execEventError, ExecutionTimeoutError, ProcessNotFoundError, SandboxError } from "../rpc/errors.ts";
import type { StdinResult } from "../rpc/processes.ts";
import type { AttachOptions, CommandHandle, OutputChunk } from "./api.ts";
import { bytesToBase64, joinBase64 } from "../rpc/bytes.ts";
import type { Connection } from "./connection.ts";
import { attachedExecEvents } from "../rpc/event-streams.ts";

/** The reason a handle's own stream is stopped with when it hands over to a new one. */
class Detached extends Error {
  override name = "Detached";
}

/** What a handle is made of: its events, the cursor they move, and how to stop them. */
export interface CommandStream {
  commandId: string;
  pid: number | undefined;
  generation: string | undefined;
  events: AsyncGenerator<ExecEvent>;
  cursor: ResumeCursor;
  /** Aborts `events`: the caller's signal is wired to it, and reconnect() uses it too. */
  stop: AbortController;
  /** The caller's signal, whose abort kills the command. */
  signal: AbortSignal | undefined;
}

type Pulled = { chunks: OutputChunk[]; done: boolean };

export class AttachedCommand implements CommandHandle {
  readonly commandId: string;
  readonly pid: number | undefined;
  readonly #connection: Connection;
  readonly #stream: CommandStream;
  readonly #dropped = { stdout: 0, stderr: 0 };
  #pulling: Promise<unknown> = Promise.resolve();
  #end: { result: ExecResult } | { error: unknown } | undefined;
  #iterators = 0;
  #idle: (() => void)[] = [];
  #result: Promise<ExecResult> | undefined;
  #successor: Promise<CommandHandle> | undefined;

  constructor(stream: CommandStream, connection: Connection) {
    this.commandId = stream.commandId;
    this.pid = stream.pid;
    this.#stream = stream;
    this.#connection = connection;
    const signal = stream.signal;
    if (signal) {
      const onAbort = () => {
        stream.stop.abort(signal.reason);
        void this.kill().catch(() => undefined);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  }

  get stdoutOffset(): number {
    return this.#stream.cursor.position("stdout") ?? 0;
  }

  get stderrOffset(): number {
    return this.#stream.cursor.position("stderr") ?? 0;
  }

  get dropped(): { stdout: number; stderr: number } {
    return { ...this.#dropped };
  }

  get result(): Promise<ExecResult> {
    this.#result ??= this.#drain();
    return this.#result;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<OutputChunk> {
    this.#iterators++;
    try {
      for (;;) {
        const { chunks, done } = await this.#pull();
        yield* chunks;
        if (done) return;
      }
    } finally {
      if (--this.#iterators === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  sendStdin(data: string | Uint8Array): Promise<StdinResult> {
    const options = { ...this.#ref, ...(typeof data === "string" ? {} : { encoding: "base64" as const }) };
    return this.#connection.rpc.writeStdin(this.commandId, typeof data === "string" ? data : bytesToBase64(data), options);
  }

  closeStdin(): Promise<StdinResult> {
    return this.#connection.rpc.closeStdin(this.commandId, this.#ref);
  }

  async kill(signal?: string | number): Promise<void> {
    await this.#connection.rpc.killProcess(this.commandId, signal, this.#ref);
  }

  reconnect(): Promise<CommandHandle> {
    this.#successor ??= (async () => {
      this.#stream.stop.abort(new Detached(`command "${this.commandId}" went on in a new handle`));
      // Wait for this handle's reader to let go, so the new one starts exactly where it stopped.
      await this.#pulling.catch(() => undefined);
      await this.#stream.events.return(undefined).catch(() => undefined);
      // After the end, from the offsets alone: the end comes again (without any output).
      const { stdoutOffset, stderrOffset, since } = { ...this.#stream.cursor.point, ...(this.#end ? { since: undefined } : {}) };
      return attach(this.#connection, this.commandId, {
        ...(this.#stream.signal ? { signal: this.#stream.signal } : {}),
        ...(since === undefined ? {} : { since }),
        ...(stdoutOffset === undefined ? {} : { stdoutOffset }),
        ...(stderrOffset === undefined ? {} : { stderrOffset }),
      });
    })();
    return this.#successor;
  }

  get #ref(): { generation?: string } {
    return this.#stream.generation === undefined ? {} : { generation: this.#stream.generation };
  }

  /** Takes the next event off the stream (one reader at a time) as chunks; `done` once the command ended. */
  #pull(): Promise<Pulled> {
    const next = this.#pulling.then(() => this.#pullOne());
    this.#pulling = next.catch(() => undefined);
    return next;
  }

  async #pullOne(): Promise<Pulled> {
    if (this.#end) {
      if ("error" in this.#end) throw this.#end.error;
      return { chunks: [], done: true };
    }
    if (this.#successor) return { chunks: [], done: true };
    let next: IteratorResult<ExecEvent>;
    try {
      next = await this.#stream.events.next();
    } catch (error) {
      if (this.#stream.stop.signal.reason instanceof Detached) return { chunks: [], done: true };
      this.#end = { error };
      throw error;
    }
    if (next.done) {
      const error = new SandboxError(`The output stream of command "${this.commandId}" ended before the command did`, "CONNECTION_FAILED");
      this.#end = { error };
      throw error;
    }
    return this.#chunksOf(next.value);
  }

  #chunksOf(event: ExecEvent): Pulled {
    switch (event.type) {
      case "stdout":
      case "stderr":
        return { chunks: [{ stream: event.type, data: event.data, offset: event.offset }], done: false };
      case "truncated": {
        const chunks: OutputChunk[] = [];
        for (const stream of ["stdout", "stderr"] as const) {
          const dropped = stream === "stdout" ? event.stdoutDropped : event.stderrDropped;
          if (!dropped) continue;
          this.#dropped[stream] += dropped;
          chunks.push({ stream, data: "", offset: this.#stream.cursor.position(stream) ?? 0, dropped });
        }
        return { chunks, done: false };
      }
      case "complete":
        this.#end = { result: event.result };
        return { chunks: [], done: true };
      case "error": {
        const error = execEventError(event);
        this.#end = { error };
        throw error;
      }
      case "start":
        return { chunks: [], done: false };
    }
  }

  /** Reads what no iterator takes, until the command ends; then its result with that output. */
  async #drain(): Promise<ExecResult> {
    const output: Record<OutputStream, string[]> = { stdout: [], stderr: [] };
    let base64 = false;
    for (;;) {
      if (this.#successor && !this.#end) return (await this.#successor).result;
      if (this.#iterators > 0) {
        await new Promise<void>((resolve) => this.#idle.push(resolve));
        continue;
      }
      let pulled: Pulled;
      try {
        pulled = await this.#pull();
      } catch (error) {
        // A timed-out command's error carries its result: with the output read here.
        if (!(error instanceof ExecutionTimeoutError && error.result)) throw error;
        const encoded = error.result.encoding === "base64";
        const joined = (parts: string[]) => (encoded ? joinBase64(parts) : parts.join(""));
        throw execEventError({ error: error.message, code: error.code, result: error.result }, { stdout: joined(output.stdout), stderr: joined(output.stderr) });
      }
      const { chunks, done } = pulled;
      for (const chunk of chunks) if (chunk.dropped === undefined) output[chunk.stream].push(chunk.data);
      if (!done) continue;
      const end = this.#end;
      if (!end) return (await this.#successor!).result;
      if ("error" in end) throw end.error;
      base64 ||= end.result.encoding === "base64";
      const joined = (parts: string[]) => (base64 ? joinBase64(parts) : parts.join(""));
      // The streamed result leaves stdout/stderr empty: every byte came as an event.
      return { ...end.result, stdout: end.result.stdout || joined(output.stdout), stderr: end.result.stderr || joined(output.stderr) };
    }
  }
}

/** A handle on a command that is running (or just finished), from the given position. */
export async function attach(
  connection: Connection,
  commandId: string,
  options: AttachOptions & { since?: number },
): Promise<CommandHandle> {
  const record = await connection.rpc.getProcess(commandId);
  if (!record) throw new ProcessNotFoundError(`Command "${commandId}" not found`, { context: { processId: commandId } });
  const { signal, since, stdoutOffset, stderrOffset } = options;
  const point = {
    ...(since === undefined ? {} : { since }),
    stdoutOffset: stdoutOffset ?? 0,
    stderrOffset: stderrOffset ?? 0,
  };
  const stop = new AbortController();
  const cursor = new ResumeCursor(point);
  const events = attachedExecEvents(connection.rpc, commandId, { ...point, generation: record.generation }, {
    signal: stop.signal,
    retry: connection.retry,
    cursor,
  });
  return new AttachedCommand({ commandId, pid: record.pid, generation: record.generation, events, cursor, stop, signal }, connection);
}
