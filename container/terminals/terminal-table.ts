/**
 * The terminals of one server: options → a plan through the same spawn hooks as processes (so a
 * session's cwd and env, and isolation's bwrap wrapper, apply alike) → the program started on a PTY
 * → kept by id until deleted or the server closes. A finished terminal stays listed (with its exit)
 * so a viewer that comes late still reads its output and learns how it ended.
 */
import { randomUUID } from "node:crypto";
import { RUN_TAG_VAR } from "../../protocol/runtime.ts";
import { commandSessionOf, isolatedInSession } from "../../protocol/sessions.ts";
import { TERMINAL_LIMITS, type createTerminalRequestSchema } from "../../protocol/terminals.ts";
import { isServiceError, ServiceError } from "../../server-kit/service-error.ts";
import type { z } from "zod";
import type { ServerLimits } from "../config.ts";
import type { CommandEnvironment } from "../engine/environment.ts";
import type { SpawnHooks, SpawnRequest } from "../engine/hooks.ts";
import { checkCwd, initialPlan } from "../engine/spawn.ts";
import { Terminal } from "./terminal.ts";

/**
 * The PTY library, loaded with the first terminal: its modules and native binary are then no part of
 * the server's start-up, which most sandboxes never follow with a terminal.
 */
let ptyLibrary: Promise<typeof import("@lydell/node-pty")> | undefined;
const loadPty = () => (ptyLibrary ??= import("@lydell/node-pty"));

export type TerminalOptions = z.output<typeof createTerminalRequestSchema>;

/** What a terminal runs when no command is given: the login shell. */
const LOGIN_SHELL_COMMAND = "exec bash -l";

export class TerminalTable {
  readonly #terminals = new Map<string, Terminal>();

  /** Terminals whose program still runs. */
  get liveCount(): number {
    return [...this.#terminals.values()].filter((terminal) => terminal.status === "running").length;
  }
  readonly #workspace: string;
  readonly #environment: CommandEnvironment;
  readonly #hooks: SpawnHooks;
  readonly #limits: ServerLimits;
  readonly #runTag: string;
  #starts = 0;
  #closed = false;

  constructor(options: { workspace: string; environment: CommandEnvironment; hooks: SpawnHooks; limits: ServerLimits; runTag: string }) {
    this.#workspace = options.workspace;
    this.#environment = options.environment;
    this.#hooks = options.hooks;
    this.#limits = options.limits;
    this.#runTag = options.runTag;
  }

  async create(options: TerminalOptions): Promise<Terminal> {
    if (this.#closed) throw new ServiceError("CONTAINER_UNAVAILABLE", "the server is shutting down");
    const id = options.terminalId ?? `term_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
    if (this.#terminals.has(id)) throw new ServiceError("TERMINAL_EXISTS", `terminal ${id} already exists`, { terminalId: id });
    const live = [...this.#terminals.values()].filter((terminal) => terminal.status === "running").length;
    if (live >= this.#limits.maxTerminals) {
      throw new ServiceError("TOO_MANY_TERMINALS", `too many live terminals (limit ${this.#limits.maxTerminals}): kill or delete one first`, {
        limit: this.#limits.maxTerminals,
      });
    }
    if (isolatedInSession(options)) {
      throw new ServiceError("INVALID_REQUEST", "a terminal starts either in a session (sessionId) or isolated, not both", { sessionId: options.sessionId });
    }
    // Like a command, a terminal that names no session starts from the default session's cwd and env.
    const sessionId = commandSessionOf(options);
    const command = options.command ?? LOGIN_SHELL_COMMAND;
    const tag = `${this.#runTag}/t${++this.#starts}`;
    const spec = { command, args: undefined, cwd: options.cwd, env: options.env };
    const request: SpawnRequest = {
      kind: "background",
      processId: id,
      command,
      args: undefined,
      cwd: options.cwd,
      env: options.env,
      sessionId,
      workspace: this.#workspace,
    };
    try {
      const initial = initialPlan(spec, this.#workspace, this.#environment);
      const { plan, onExit } = await this.#hooks.prepare(initial, request);
      plan.env[RUN_TAG_VAR] = tag;
      plan.env.TERM ??= "xterm-256color";
      checkCwd(plan.cwd);
      const { spawn: spawnPty } = await loadPty();
      const pty = spawnPty(plan.file, plan.args, { cols: options.cols, rows: options.rows, cwd: plan.cwd, env: plan.env, encoding: null, name: plan.env.TERM });
      const terminal = new Terminal({
        id,
        command,
        sessionId,
        tag,
        pty,
        cols: options.cols,
        rows: options.rows,
        retentionBytes: TERMINAL_LIMITS.retentionBytes,
        killGraceMs: this.#limits.killGraceMs,
        onExit,
      });
      this.#terminals.set(id, terminal);
      return terminal;
    } catch (error) {
      if (isServiceError(error)) throw new ServiceError(error.code, error.message, { ...error.context, terminalId: id });
      throw new ServiceError("SPAWN_FAILED", `cannot start terminal: ${(error as Error).message}`, { terminalId: id });
    }
  }

  get(id: string): Terminal {
    const terminal = this.#terminals.get(id);
    if (!terminal) throw new ServiceError("TERMINAL_NOT_FOUND", `terminal ${id} not found`, { terminalId: id });
    return terminal;
  }

  list(): Terminal[] {
    return [...this.#terminals.values()];
  }

  /** Kills (when running) and forgets a terminal; resolves once it has exited. */
  async remove(id: string): Promise<void> {
    const terminal = this.get(id);
    terminal.kill("SIGKILL");
    await terminal.exited;
    this.#terminals.delete(id);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const all = this.list();
    for (const terminal of all) terminal.kill("SIGKILL");
    await Promise.all(all.map((terminal) => terminal.exited));
  }
}
