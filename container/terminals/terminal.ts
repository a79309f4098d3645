/**
 * One terminal: a program on a pseudo-terminal, and the bounded output log its output goes to (the
 * same log with cursors that processes have, so a viewer resumes after the seq it last had and any
 * number of viewers read one terminal). The program leads its own session and process group (the
 * PTY library starts it with setsid); a kill signals that group and everything carrying the
 * terminal's run tag, so jobs the shell put in their own groups go too.
 */
import type { IPty } from "@lydell/node-pty";
import type { ProcessStatus } from "../../protocol/process.ts";
import type { TerminalInfo, TerminalStatus } from "../../protocol/terminals.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { processesTaggedExactly } from "../../server-kit/tagged-processes.ts";
import { terminateTree } from "../engine/kill.ts";
import { OutputLog } from "../engine/output-log.ts";
import type { ExitHook } from "../engine/hooks.ts";
import { readPtyOutput } from "./pty-output.ts";
import { signalName } from "./signals.ts";

export interface TerminalExit {
  exitCode?: number;
  signal?: string;
}

export class Terminal {
  readonly id: string;
  readonly command: string;
  readonly sessionId: string | undefined;
  readonly tag: string;
  readonly log: OutputLog;
  readonly startTime = new Date();
  /** Resolves once the program has exited and its output is in the log. */
  readonly exited: Promise<TerminalExit>;
  #pty: IPty;
  #cols: number;
  #rows: number;
  #exit: TerminalExit | undefined;
  #endTime: Date | undefined;
  #cancelEscalation: (() => void) | undefined;
  #killGraceMs: number;

  constructor(options: {
    id: string;
    command: string;
    sessionId: string | undefined;
    tag: string;
    pty: IPty;
    cols: number;
    rows: number;
    retentionBytes: number;
    killGraceMs: number;
    onExit: ExitHook[];
  }) {
    this.id = options.id;
    this.command = options.command;
    this.sessionId = options.sessionId;
    this.tag = options.tag;
    this.#pty = options.pty;
    this.#cols = options.cols;
    this.#rows = options.rows;
    this.#killGraceMs = options.killGraceMs;
    this.log = new OutputLog(options.retentionBytes);
    const pty = options.pty;
    readPtyOutput(pty, (data) => {
      if (!this.log.closed) this.log.appendOutput("stdout", data);
    });
    this.exited = new Promise((resolve) => {
      pty.onExit(({ exitCode, signal }) => {
        // Everything the program wrote is in the log by now (pty-output.ts): the exit comes after it.
        const exit: TerminalExit = signal ? { signal: signalName(signal) } : { exitCode };
        this.#exit = exit;
        this.#endTime = new Date();
        this.#cancelEscalation?.();
        void runExitHooks(options.onExit, this).finally(() => {
          this.log.appendStatus({
            status: endStatus(exit),
            ...(exit.exitCode === undefined ? {} : { exitCode: exit.exitCode }),
            ...(exit.signal === undefined ? {} : { signal: exit.signal }),
          });
          this.log.close();
          resolve(exit);
        });
      });
    });
  }

  get pid(): number {
    return this.#pty.pid;
  }
  get status(): TerminalStatus {
    return this.#exit ? "exited" : "running";
  }
  get exit(): TerminalExit | undefined {
    return this.#exit;
  }

  info(): TerminalInfo {
    const exit = this.#exit;
    return {
      id: this.id,
      pid: this.pid,
      command: this.command,
      cols: this.#cols,
      rows: this.#rows,
      status: this.status,
      startTime: this.startTime.toISOString(),
      ...(this.#endTime ? { endTime: this.#endTime.toISOString() } : {}),
      ...(exit?.exitCode === undefined ? {} : { exitCode: exit.exitCode }),
      ...(exit?.signal === undefined ? {} : { signal: exit.signal }),
      ...(this.sessionId === undefined ? {} : { sessionId: this.sessionId }),
      cursor: this.log.lastSeq,
    };
  }

  write(data: Buffer): void {
    this.#running();
    (this.#pty as unknown as { write(data: Buffer | string): void }).write(data);
  }

  /** The kernel sends SIGWINCH to the foreground group when the size changes. */
  resize(cols: number, rows: number): void {
    this.#running();
    this.#pty.resize(cols, rows);
    this.#cols = cols;
    this.#rows = rows;
  }

  /** Ctrl-C through the line discipline: SIGINT to the foreground job, as a keyboard would. */
  interrupt(): void {
    this.write(Buffer.from([0x03]));
  }

  /** Signals the whole group (and tagged strays); SIGKILL after the grace period. Idempotent once exited. */
  kill(signal: NodeJS.Signals): void {
    if (this.#exit) return;
    this.#cancelEscalation?.();
    this.#cancelEscalation = terminateTree(this.pid, () => processesTaggedExactly(this.tag), signal, this.#killGraceMs);
  }

  #running(): void {
    if (this.#exit) throw new ServiceError("TERMINAL_EXITED", `terminal ${this.id} has exited`, { terminalId: this.id });
  }
}

async function runExitHooks(hooks: ExitHook[], terminal: Terminal): Promise<void> {
  for (const hook of hooks) {
    try {
      await hook({
        id: terminal.id,
        pid: terminal.pid,
        command: terminal.command,
        status: endStatus(terminal.exit ?? {}),
        startTime: terminal.startTime.toISOString(),
        ...(terminal.exit?.exitCode === undefined ? {} : { exitCode: terminal.exit.exitCode }),
        ...(terminal.sessionId === undefined ? {} : { sessionId: terminal.sessionId }),
      });
    } catch {
      // An exit hook's failure (a session capture) does not change how the terminal ended.
    }
  }
}

/** How the log's status entry (shared with processes) names the end. */
function endStatus(exit: TerminalExit): ProcessStatus {
  if (exit.signal !== undefined) return "killed";
  return exit.exitCode === 0 ? "completed" : "failed";
}
