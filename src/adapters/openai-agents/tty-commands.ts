/**
 * Commands the SDK runs with a TTY (`execCommand({ tty: true })`, then `writeStdin`), each on a
 * terminal of its own in the sandbox, running exactly that command line. Through the Bridge every
 * TTY command is typed into the sandbox's one shared terminal, so a later command's answer replays
 * what earlier ones printed, and no exit code is ever known; on a terminal of its own a command's
 * output is only its own, commands run side by side, and when it exits its answer says with what
 * code. The answers are the SDK's own text (`formatExecResponse`): output, then either the exit code
 * or, for a command still running after the yield time, the session id `writeStdin` takes.
 *
 * A command waits for its exit with one long-polled call, made once and shared by every look at it,
 * so waiting out a yield time costs no polling. Terminals of commands still running are killed when
 * the session closes; past RUNNING_AT_MOST, the one idle longest is killed to make room.
 */
import { elapsedSeconds, formatExecResponse, truncateOutput } from "@openai/agents-core/sandbox/internal";
import type { SandboxClient } from "../../client/sandbox-client.ts";
import type { Terminal } from "../../client/terminal.ts";
import type { TerminalInfo } from "../../../protocol/terminals.ts";

/** Yield times as the SDK bounds them: a TTY command answers after 250 ms at least and 30 s at most. */
const YIELD_MIN_MS = 250;
const YIELD_MAX_MS = 30_000;
const EXEC_YIELD_DEFAULT_MS = 10_000;
const WRITE_YIELD_DEFAULT_MS = 250;
/** A writeStdin with nothing to write is a poll: it waits this long at least, as the SDK's does. */
const POLL_YIELD_MIN_MS = 5_000;
/** Below the service's live terminals per sandbox (32), leaving room for other terminals. */
const RUNNING_AT_MOST = 16;
const TERMINAL_SIZE = { cols: 80, rows: 24 };
/** Before asking again after a failed wait for an exit. */
const WAIT_RETRY_MS = 500;

interface RunningCommand {
  terminal: Terminal;
  cursor: number;
  decoder: TextDecoder;
  /** Settles with the terminal's final record once it exits (undefined once the session closed first). */
  exit: Promise<TerminalInfo | undefined>;
  exited: TerminalInfo | undefined;
  lastUsed: number;
}

const clamp = (ms: number) => Math.max(YIELD_MIN_MS, Math.min(YIELD_MAX_MS, ms));
const sleep = (ms: number) => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms));

/** A terminal's exit as a shell reports it: its code, else 128 + the signal's number (1 when unknown). */
function exitCodeOf(info: TerminalInfo): number {
  if (typeof info.exitCode === "number") return info.exitCode;
  return info.signal === "SIGKILL" ? 137 : info.signal === "SIGTERM" ? 143 : info.signal === "SIGINT" ? 130 : 1;
}

export interface TtyAnswerOptions {
  yieldTimeMs?: number;
  maxOutputTokens?: number;
}

export class TtyCommands {
  readonly #client: SandboxClient;
  readonly #running = new Map<number, RunningCommand>();
  #closed = false;

  constructor(client: SandboxClient) {
    this.#client = client;
  }

  /** Starts `commandLine` on a terminal of its own; answers after the yield time, or sooner if it exits. */
  async start(commandLine: string, options: TtyAnswerOptions): Promise<string> {
    const started = Date.now();
    await this.#makeRoom();
    const terminal = await this.#client.createTerminal({ command: commandLine, ...TERMINAL_SIZE });
    const command: RunningCommand = { terminal, cursor: 0, decoder: new TextDecoder(), exit: this.#exitOf(terminal), exited: undefined, lastUsed: Date.now() };
    return this.#answer(command, this.#newId(command), started, clamp(options.yieldTimeMs ?? EXEC_YIELD_DEFAULT_MS), options.maxOutputTokens);
  }

  /** Whether `sessionId` names a command of these (else it is the SDK's own). */
  has(sessionId: number): boolean {
    return this.#running.has(sessionId);
  }

  /** Types `chars` into the command's terminal (nothing: only looks), then answers as start does. */
  async write(sessionId: number, chars: string, options: TtyAnswerOptions): Promise<string> {
    const started = Date.now();
    const command = this.#running.get(sessionId)!;
    if (chars.length > 0 && command.exited === undefined) await command.terminal.write(chars);
    const asked = clamp(options.yieldTimeMs ?? WRITE_YIELD_DEFAULT_MS);
    return this.#answer(command, sessionId, started, chars.length === 0 ? Math.max(asked, POLL_YIELD_MIN_MS) : asked, options.maxOutputTokens);
  }

  /** Kills every command still running (the session is closing). */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const running = [...this.#running.values()];
    this.#running.clear();
    await Promise.allSettled(running.map((command) => (command.exited ? undefined : command.terminal.kill("SIGKILL"))));
  }

  async #answer(command: RunningCommand, sessionId: number, started: number, yieldMs: number, maxOutputTokens: number | undefined): Promise<string> {
    command.exited ??= await Promise.race([command.exit, sleep(yieldMs)]);
    const output = await this.#drain(command);
    command.lastUsed = Date.now();
    const truncated = truncateOutput(output, maxOutputTokens);
    const ended = command.exited !== undefined;
    if (ended) this.#running.delete(sessionId);
    return formatExecResponse({
      output: truncated.text,
      wallTimeSeconds: elapsedSeconds(started),
      ...(ended ? { exitCode: exitCodeOf(command.exited!) } : { sessionId }),
      ...(truncated.originalTokenCount === undefined ? {} : { originalTokenCount: truncated.originalTokenCount }),
    });
  }

  /** What the terminal printed since the last look (all of it, once it has exited). */
  async #drain(command: RunningCommand): Promise<string> {
    const { data, cursor } = await command.terminal.output({ since: command.cursor });
    command.cursor = cursor;
    return command.decoder.decode(data, { stream: command.exited === undefined });
  }

  /** The terminal's final record; a wait that fails (a dropped connection) is asked again, until the session closes. */
  async #exitOf(terminal: Terminal): Promise<TerminalInfo | undefined> {
    while (!this.#closed) {
      try {
        return await terminal.waitForExit();
      } catch {
        await sleep(WAIT_RETRY_MS);
        const info = await terminal.refresh().catch(() => undefined);
        if (info && info.status !== "running") return info;
      }
    }
    return undefined;
  }

  #newId(command: RunningCommand): number {
    let id: number;
    do id = 1_000 + Math.floor(Math.random() * 99_000);
    while (this.#running.has(id));
    this.#running.set(id, command);
    return id;
  }

  async #makeRoom(): Promise<void> {
    if (this.#running.size < RUNNING_AT_MOST) return;
    const [oldest] = [...this.#running.entries()].sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    if (!oldest) return;
    this.#running.delete(oldest[0]);
    await oldest[1].terminal.kill("SIGKILL").catch(() => undefined);
  }
}
