/**
 * A process handle: the record from when it was made plus methods that ask the sandbox again. Every
 * call carries the handle's container generation, so after a container restart it fails with
 * StaleProcessHandleError instead of touching whatever process now has the same id.
 */
import type { ExecEvent, LogEvent } from "../../protocol/events.ts";
import { isTerminalStatus, type ProcessStatus } from "../../protocol/process.ts";
import { isProbeHost, tcpProbeCommand } from "../../protocol/ports.ts";
import { readEventStream } from "../../protocol/sse.ts";
import type { LogMatch, LogStreamOptions, Process, ProcessExit, WaitForPortOptions } from "./api.ts";
import { ExecutionTimeoutError, ProcessNotFoundError, ProcessNotRunningError, SandboxError } from "../rpc/errors.ts";
import type { HandleRef, ProcessRecord, StdinResult } from "../rpc/processes.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { Connection } from "./connection.ts";
import { logEvents } from "../rpc/event-streams.ts";
import { outputText } from "../rpc/bytes.ts";

const DEFAULT_PORT_TIMEOUT_MS = 60_000;
/** How much recent output per stream waitForLog keeps to match patterns that span chunks. */
const MATCH_WINDOW_CHARS = 64 * 1024;

export class ProcessHandle implements Process {
  readonly id: string;
  readonly pid?: number;
  readonly command: string;
  readonly status: ProcessStatus;
  readonly startTime: Date;
  readonly endTime?: Date;
  readonly exitCode?: number;
  readonly sessionId?: string;
  readonly generation: string;
  /** The full record as the sandbox reported it. */
  readonly record: ProcessRecord;
  readonly #rpc: SandboxRpc;
  readonly #connection: Connection;

  constructor(record: ProcessRecord, connection: Connection) {
    this.record = record;
    this.#connection = connection;
    this.#rpc = connection.rpc;
    this.id = record.id;
    this.command = record.command;
    this.status = record.status;
    this.startTime = new Date(record.startTime);
    this.generation = record.generation;
    if (record.pid !== undefined) this.pid = record.pid;
    if (record.endTime !== undefined) this.endTime = new Date(record.endTime);
    if (record.exitCode !== undefined) this.exitCode = record.exitCode;
    if (record.sessionId !== undefined) this.sessionId = record.sessionId;
  }

  get #ref(): HandleRef {
    return { generation: this.generation };
  }

  async kill(signal?: string | number): Promise<void> {
    await this.#rpc.killProcess(this.id, signal, this.#ref);
  }

  async refresh(): Promise<ProcessRecord> {
    const record = await this.#rpc.getProcess(this.id, this.#ref);
    if (!record) throw new ProcessNotFoundError(`Process "${this.id}" not found`, { context: { processId: this.id } });
    return record;
  }

  async getStatus(): Promise<ProcessStatus> {
    return (await this.refresh()).status;
  }

  async getLogs(): Promise<{ stdout: string; stderr: string }> {
    const { stdout, stderr } = await this.#rpc.getProcessLogs(this.id, this.#ref);
    return { stdout, stderr };
  }

  sendStdin(data: string, options: { encoding?: "utf8" | "base64" } = {}): Promise<StdinResult> {
    return this.#rpc.writeStdin(this.id, data, { ...options, ...this.#ref });
  }

  closeStdin(): Promise<StdinResult> {
    return this.#rpc.closeStdin(this.id, this.#ref);
  }

  streamLogs(options: LogStreamOptions = {}): AsyncGenerator<LogEvent> {
    return logEvents(this.#rpc, this.id, { ...options, ref: this.#ref, retry: this.#connection.retry });
  }

  waitForExit(timeout?: number): Promise<ProcessExit> {
    return withTimeout(timeout, `Process "${this.id}" did not exit within ${timeout} ms`, (signal) => this.#exit(signal));
  }

  async #exit(signal: AbortSignal): Promise<ProcessExit> {
    const current = await this.refresh();
    if (isTerminalStatus(current.status)) return exitOf(current);
    for await (const event of this.streamLogs({ signal, ...(current.lastSeq === undefined ? {} : { since: current.lastSeq }) })) {
      if (event.type === "status" && isTerminalStatus(event.status)) return exitOf(event);
    }
    // The stream ended without a final status (connection lost, container gone): ask directly.
    const after = await this.refresh();
    if (isTerminalStatus(after.status)) return exitOf(after);
    throw new SandboxError(`The log stream of process "${this.id}" ended before it exited`, "CONNECTION_FAILED");
  }

  async waitForLog(pattern: string | RegExp, timeout?: number): Promise<LogMatch> {
    return withTimeout(timeout, `No output of process "${this.id}" matched ${String(pattern)} within ${timeout} ms`, async (signal) => {
      const windows = { stdout: "", stderr: "" };
      for await (const event of this.streamLogs({ signal })) {
        if (event.type === "stdout" || event.type === "stderr") {
          const text = windows[event.type] + outputText(event);
          const found = matchLines(text, pattern, event.type);
          if (found) return found;
          windows[event.type] = text.slice(-MATCH_WINDOW_CHARS);
        } else if (event.type === "status" && isTerminalStatus(event.status)) {
          throw new ProcessNotRunningError(
            `Process "${this.id}" exited (${event.status}, code ${event.exitCode ?? "none"}) before its output matched ${String(pattern)}`,
            { context: { processId: this.id, exitCode: event.exitCode, status: event.status } },
          );
        }
      }
      throw new SandboxError(`The log stream of process "${this.id}" ended before its output matched`, "CONNECTION_FAILED");
    });
  }

  async waitForPort(port: number, options: WaitForPortOptions = {}): Promise<void> {
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new SandboxError(`Not a TCP port: ${port}`, "INVALID_REQUEST");
    }
    const host = options.host ?? "127.0.0.1";
    if (!isProbeHost(host)) throw new SandboxError(`Not a host name: ${host}`, "INVALID_REQUEST");
    const timeout = options.timeout ?? DEFAULT_PORT_TIMEOUT_MS;
    // One command inside the sandbox polls the port (the port is only reachable from in there);
    // meanwhile we watch the process, which may die before it ever listens.
    const probe = tcpProbeCommand(host, port, 50);
    const stop = new AbortController();
    const exited = this.#exit(stop.signal).then((exit) => {
      throw new ProcessNotRunningError(`Process "${this.id}" exited (${exit.status}) before port ${port} accepted connections`, {
        context: { processId: this.id, port, ...exit },
      });
    });
    exited.catch(() => undefined);
    // Named, so it can be killed the moment we stop waiting (a cancelled stream is noticed late).
    const probeId = `port-probe-${port}-${Math.random().toString(36).slice(2, 10)}`;
    let probing = false;
    try {
      // Isolated: the probe is ours, not a command of the caller's session (its options, aliases).
      const stream = await this.#rpc.execStream(probe, { timeout, killOnDisconnect: true, processId: probeId, isolated: true });
      probing = true;
      const notListening = () => new ExecutionTimeoutError(`Port ${port} did not accept connections within ${timeout} ms`, { context: { processId: this.id, port } });
      const probed = (async () => {
        for await (const event of readEventStream<ExecEvent>(stream, stop.signal)) {
          if (event.type === "complete") {
            if (event.result.success) return;
            throw notListening();
          }
          // The probe past its time limit ends with this stream's timeout error.
          if (event.type === "error" && event.code === "EXECUTION_TIMEOUT") throw notListening();
        }
        throw new SandboxError(`The port probe for ${port} ended without a result`, "CONNECTION_FAILED");
      })();
      await Promise.race([probed, exited]);
      probing = false;
    } finally {
      stop.abort();
      if (probing) await this.#rpc.killProcess(probeId, "SIGKILL").catch(() => undefined);
    }
  }
}

function exitOf(source: { status: ProcessStatus; exitCode?: number; signal?: string; timedOut?: boolean }): ProcessExit {
  return {
    status: source.status,
    exitCode: source.exitCode ?? null,
    ...(source.signal === undefined ? {} : { signal: source.signal }),
    ...(source.timedOut === undefined ? {} : { timedOut: source.timedOut }),
  };
}

function matchLines(text: string, pattern: string | RegExp, stream: "stdout" | "stderr"): LogMatch | undefined {
  for (const line of text.split(/\r?\n/)) {
    if (typeof pattern === "string") {
      if (line.includes(pattern)) return { line, stream };
    } else {
      pattern.lastIndex = 0;
      const match = line.match(pattern);
      if (match) return { line, stream, match };
    }
  }
  return undefined;
}

/** Runs `work` with a signal that aborts after `timeout` ms, turning that into ExecutionTimeoutError. */
async function withTimeout<T>(timeout: number | undefined, message: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer =
    timeout === undefined ? undefined : setTimeout(() => controller.abort(new ExecutionTimeoutError(message)), timeout);
  try {
    return await work(controller.signal);
  } catch (error) {
    if (controller.signal.aborted) throw controller.signal.reason;
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    controller.abort();
  }
}
