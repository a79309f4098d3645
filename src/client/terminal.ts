/**
 * A terminal as a client holds it: the record it was created or fetched with, and the calls that act
 * on it. The terminal lives in the sandbox, not in this object: dropping the handle or closing a
 * viewer leaves it running; `kill()` ends it (its whole process group).
 */
import { isWebSocketUpgrade, WEBSOCKET_UPGRADE_MESSAGE, type TerminalInfo, type TerminalOutput } from "../../protocol/terminals.ts";
import { ERROR_CODES, errorBody } from "../../protocol/errors.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { TerminalKillResult, TerminalOutputOptions, TerminalWriteResult } from "../rpc/terminals.ts";
import { base64ToBytes } from "../rpc/bytes.ts";

/** Output after a cursor, as bytes, and the cursor to pass next time. */
export interface TerminalOutputBytes extends Omit<TerminalOutput, "data"> {
  data: Uint8Array;
}

export class Terminal {
  readonly id: string;
  readonly pid: number;
  readonly #rpc: SandboxRpc;
  #info: TerminalInfo;

  constructor(info: TerminalInfo, rpc: SandboxRpc) {
    this.id = info.id;
    this.pid = info.pid;
    this.#info = info;
    this.#rpc = rpc;
  }

  get cols(): number {
    return this.#info.cols;
  }
  get rows(): number {
    return this.#info.rows;
  }
  /** The record as last seen by this handle (`refresh()` asks again). */
  get info(): TerminalInfo {
    return this.#info;
  }

  async refresh(): Promise<TerminalInfo> {
    return (this.#info = await this.#rpc.getTerminal(this.id));
  }

  /** Input as typed: text as UTF-8, or bytes. */
  write(data: string | Uint8Array): Promise<TerminalWriteResult> {
    return this.#rpc.writeTerminal(this.id, data);
  }

  /** The program sees SIGWINCH and the new size. */
  async resize(cols: number, rows: number): Promise<TerminalInfo> {
    return (this.#info = await this.#rpc.resizeTerminal(this.id, cols, rows));
  }

  /** Ctrl-C: SIGINT to the foreground job. */
  async interrupt(): Promise<void> {
    await this.#rpc.interruptTerminal(this.id);
  }

  kill(signal?: string | number): Promise<TerminalKillResult> {
    return this.#rpc.killTerminal(this.id, signal);
  }

  /** Resolves with the final record (exitCode, or signal) once the program has exited. */
  async waitForExit(): Promise<TerminalInfo> {
    return (this.#info = await this.#rpc.waitForTerminal(this.id));
  }

  /** The retained output after `since` (default: from the start). */
  async output(options: TerminalOutputOptions = {}): Promise<TerminalOutputBytes> {
    const output = await this.#rpc.terminalOutput(this.id, options);
    return { ...output, data: base64ToBytes(output.data) };
  }

  /**
   * Upgrades `request` (a WebSocket request; `?since=<cursor>` in its URL resumes) to a viewer of the
   * terminal: return the 101 response from a Worker's fetch handler, or accept its `webSocket`.
   */
  connect(request: Request): Promise<Response> {
    // Answered here, as a handler would: the sandbox is never asked about a request it cannot serve.
    if (!isWebSocketUpgrade(request)) {
      const code = "WEBSOCKET_UPGRADE_REQUIRED";
      return Promise.resolve(Response.json(errorBody(code, WEBSOCKET_UPGRADE_MESSAGE), { status: ERROR_CODES[code] }));
    }
    return this.#rpc.connectTerminal(this.id, request);
  }
}
