/**
 * One interpreter process of a context: started through the same spawn path as every command (the
 * sandbox env, the session's cwd and env, isolation), so the walls of the sandbox are its walls too;
 * then driven over fd 3 (channel.ts). Starting resolves once the driver says it is ready.
 *
 * The process leads its own group; killing it kills the group (subprocesses a cell left running go
 * too). Its own stdout and stderr are read as well: a driver sends the cell's output over the
 * channel, but output of a subprocess with inherited stdio, and the interpreter's dying words, come
 * this way.
 */
import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import type { CodeLanguage } from "../../protocol/code.ts";
import { signalNumber, type OutputStream, type ProcessInfo } from "../../protocol/process.ts";
import { isExecutableFile } from "../../server-kit/executables.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import type { CommandEnvironment } from "../engine/environment.ts";
import type { ExitHook, SpawnHooks, SpawnRequest } from "../engine/hooks.ts";
import { signalGroup } from "../engine/kill.ts";
import type { CommandSpec } from "../engine/options.ts";
import { checkCwd, initialPlan, spawnChild } from "../engine/spawn.ts";
import { encodeMessage, FrameDecoder, type DriverMessage, type ServerMessage } from "./channel.ts";
import { interpreterLaunch, type InterpreterPrograms } from "./languages.ts";

/** How much of the interpreter's own stderr is kept, to say why it died. */
const STDERR_TAIL_BYTES = 4096;

export interface InterpreterSetup {
  /** The context's id: the spawn hooks see it as the process id. */
  id: string;
  language: CodeLanguage;
  cwd: string | undefined;
  env: Record<string, string> | undefined;
  sessionId: string | undefined;
  programs: InterpreterPrograms;
  workspace: string;
  environment: CommandEnvironment;
  hooks: SpawnHooks;
  startTimeoutMs: number;
}

export interface InterpreterExit {
  code: number | null;
  signal: string | null;
  /** Why the server ended it, or why the channel broke. */
  reason: string | undefined;
  /** The last of what the interpreter wrote to its own stderr. */
  stderrTail: string;
}

/** What the context hears from its interpreter. */
export interface InterpreterListener {
  output(stream: OutputStream, data: Buffer): void;
  message(message: DriverMessage): void;
  exit(exit: InterpreterExit): void;
}

type ReadyMessage = Extract<DriverMessage, { type: "ready" }>;

export class InterpreterProcess {
  readonly pid: number;
  readonly language: CodeLanguage;
  /** Resolves once the process is gone (never rejects). */
  readonly exited: Promise<InterpreterExit>;
  /** The driver's `ready`: version, and where it started as it sees it. */
  version = "";
  cwd = "";
  readonly #child: ChildProcess;
  readonly #channel: Socket;
  readonly #decoder = new FrameDecoder();
  readonly #listener: InterpreterListener;
  #stderrTail = Buffer.alloc(0);
  #reason: string | undefined;
  #ready = false;
  #onReady: ((ready: ReadyMessage | Error) => void) | undefined;

  /** Spawns the interpreter and waits for its driver to be ready; throws a ServiceError when it cannot start. */
  static async start(setup: InterpreterSetup, listener: InterpreterListener): Promise<InterpreterProcess> {
    const launch = interpreterLaunch(setup.language, setup.programs);
    if (!isExecutableFile(launch.program)) {
      throw new ServiceError("INTERPRETER_UNAVAILABLE", launch.missing, { language: setup.language, program: launch.program });
    }
    const spec: CommandSpec = {
      kind: "background",
      command: launch.program,
      args: launch.args,
      env: setup.env,
      cwd: setup.cwd,
      sessionId: setup.sessionId,
      processId: setup.id,
      encoding: "utf8",
      timeoutMs: undefined,
      stdin: undefined,
      keepStdinOpen: false,
      autoCleanup: false,
      logRetentionBytes: 0,
      captureBytes: undefined,
      killOnDisconnect: false,
    };
    const request: SpawnRequest = {
      kind: "background",
      processId: setup.id,
      command: launch.program,
      args: launch.args,
      cwd: setup.cwd,
      env: setup.env,
      sessionId: setup.sessionId,
      workspace: setup.workspace,
      programPaths: launch.programPaths,
    };
    const { plan, onExit } = await setup.hooks.prepare(initialPlan(spec, setup.workspace, setup.environment), request);
    checkCwd(plan.cwd);
    const child = await spawnChild(plan, launch.program, "ignore", 1);
    const interpreter = new InterpreterProcess(child, setup, listener, onExit);
    await interpreter.#whenReady(setup.startTimeoutMs);
    return interpreter;
  }

  private constructor(child: ChildProcess, setup: InterpreterSetup, listener: InterpreterListener, onExit: ExitHook[]) {
    this.#child = child;
    this.#channel = child.stdio[3] as Socket;
    this.#listener = listener;
    this.pid = child.pid!;
    this.language = setup.language;
    this.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        const exit = { code, signal, reason: this.#reason, stderrTail: this.#stderrTail.toString("utf8") };
        this.#onReady?.(new Error(describeEarlyExit(this.language, exit)));
        const info = exitInfo(setup.id, child.spawnfile, code, signal);
        for (const hook of onExit) void Promise.resolve(hook(info)).catch(() => {});
        resolve(exit);
      });
    });
    child.on("error", () => {}); // 'close' follows
    this.#channel.on("error", () => {});
    this.#channel.on("data", (chunk: Buffer) => this.#read(chunk));
    child.stdout?.on("data", (chunk: Buffer) => {
      if (this.#ready) listener.output("stdout", chunk);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      const tail = Buffer.concat([this.#stderrTail, chunk]);
      this.#stderrTail = tail.length > STDERR_TAIL_BYTES ? tail.subarray(tail.length - STDERR_TAIL_BYTES) : tail;
      if (this.#ready) listener.output("stderr", chunk);
    });
  }

  async #whenReady(timeoutMs: number): Promise<void> {
    const outcome = await new Promise<ReadyMessage | Error>((resolve) => {
      const timer = setTimeout(() => resolve(new Error(`the ${this.language} interpreter did not get ready within ${timeoutMs} ms`)), timeoutMs);
      this.#onReady = (ready) => {
        clearTimeout(timer);
        this.#onReady = undefined;
        resolve(ready);
      };
    });
    if (outcome instanceof Error) {
      await this.kill(outcome.message);
      throw new ServiceError("INTERPRETER_UNAVAILABLE", `cannot start a ${this.language} context: ${outcome.message}`, { language: this.language });
    }
    this.version = outcome.version;
    this.cwd = outcome.cwd ?? "";
    this.#ready = true;
    void this.exited.then((exit) => this.#listener.exit(exit));
  }

  #read(chunk: Buffer): void {
    let frames;
    try {
      frames = this.#decoder.push(chunk);
    } catch (error) {
      // Something other than the driver wrote into the channel: the context cannot be trusted on.
      void this.kill(`the interpreter's channel broke: ${(error as Error).message}`);
      return;
    }
    for (const frame of frames) {
      if (frame.kind !== "message") {
        if (this.#ready) this.#listener.output(frame.kind, frame.data);
      } else if (frame.message.type === "ready") this.#onReady?.(frame.message);
      else if (this.#ready) this.#listener.message(frame.message);
    }
  }

  send(message: ServerMessage): void {
    if (!this.#channel.writable) return;
    this.#channel.write(encodeMessage(message));
  }

  /** Stop reading (a reader of the running cell fell behind): the driver then blocks on its writes. */
  pause(paused: boolean): void {
    for (const stream of [this.#channel, this.#child.stdout, this.#child.stderr]) {
      if (paused) stream?.pause();
      else stream?.resume();
    }
  }

  /** SIGKILLs the interpreter and its group; resolves once it is gone. */
  async kill(reason: string): Promise<InterpreterExit> {
    this.#reason ??= reason;
    try {
      signalGroup(this.pid, "SIGKILL");
    } catch {
      // not ours to signal any more (EPERM): it is going or gone
    }
    return this.exited;
  }
}

function describeEarlyExit(language: CodeLanguage, exit: { code: number | null; signal: string | null; stderrTail: string }): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const said = exit.stderrTail.trim();
  return `the ${language} interpreter ${how} before it was ready${said ? `: ${said.slice(-1000)}` : ""}`;
}

/** The interpreter's end as a process record, for the spawn hooks' exit callbacks. */
function exitInfo(id: string, command: string, code: number | null, signal: NodeJS.Signals | null): ProcessInfo {
  const exitCode = signal ? 128 + (signalNumber(signal) ?? 0) : (code ?? 1);
  return {
    id,
    command,
    status: signal ? "killed" : exitCode === 0 ? "completed" : "failed",
    startTime: new Date().toISOString(),
    exitCode,
    ...(signal ? { signal, killed: true } : {}),
  };
}
