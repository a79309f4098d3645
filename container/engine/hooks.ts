/**
 * Hook points around a spawn, for the parts of the server that change how a command runs without
 * touching the engine: sessions (start in the session's cwd/env, capture them after exit) and
 * isolation (wrap argv in a sandboxing launcher).
 *
 * Before spawn, every hook's `prepare` is called in ascending `order`, each receiving the plan the
 * previous one returned. A hook may return an `onExit` callback; after the process has exited and its
 * pipes are drained, the callbacks run (in reverse order, awaited) BEFORE the terminal status is
 * logged and the exec result is sent, so state they capture is in place when the caller hears back.
 * A hook may throw a ServiceError (e.g. SESSION_NOT_FOUND, ISOLATION_UNAVAILABLE): the request fails
 * with that code and the record ends in status `error`.
 */
import type { ProcessInfo } from "../../protocol/process.ts";
import type { CommandEnvVars } from "../../protocol/sessions.ts";

/** What the caller asked for, as hooks see it (read-only). */
export interface SpawnRequest {
  readonly kind: "exec" | "background";
  readonly processId: string;
  /** The command string (shell) or program name (with `args`). */
  readonly command: string;
  /** Present when the program is executed directly, without a shell. */
  readonly args: readonly string[] | undefined;
  /** The per-call cwd exactly as given (undefined: the caller did not set one). */
  readonly cwd: string | undefined;
  /** The per-call env (undefined: none given; a null value unsets that variable). */
  readonly env: Readonly<CommandEnvVars> | undefined;
  readonly sessionId: string | undefined;
  /** The call's own time limit (undefined: it gave none). */
  readonly timeoutMs?: number | undefined;
  readonly workspace: string;
  /**
   * Host files the program itself needs beyond the system directories (an interpreter installed
   * elsewhere): isolation makes them visible to it, read-only.
   */
  readonly programPaths?: readonly string[];
}

/** What will be spawned. `file` is absolute; `args` excludes argv[0]. */
export interface SpawnPlan {
  file: string;
  args: string[];
  /** The full environment of the command (base ← sandbox env ← per-call env, before hooks). */
  env: Record<string, string>;
  /** Absolute working directory. */
  cwd: string;
  /** A time limit a hook gives a call that set none (a session's commandTimeoutMs). */
  timeoutMs?: number;
}

/** Runs after exit with the record as it will be reported (terminal status, exit code). */
export type ExitHook = (process: ProcessInfo) => void | Promise<void>;

export interface PreparedSpawn extends SpawnPlan {
  onExit?: ExitHook;
}

export interface SpawnHook {
  name: string;
  /** Lower runs first; see HOOK_ORDER. */
  order: number;
  prepare(plan: SpawnPlan, request: SpawnRequest): PreparedSpawn | Promise<PreparedSpawn>;
}

/** Sessions pick cwd/env and wrap the command; isolation wraps whatever comes out of that. */
export const HOOK_ORDER = { session: 100, isolation: 200 } as const;

export class SpawnHooks {
  #hooks: SpawnHook[] = [];

  /** Adds a hook; returns a function that removes it. */
  add(hook: SpawnHook): () => void {
    this.#hooks = [...this.#hooks, hook].sort((a, b) => a.order - b.order);
    return () => {
      this.#hooks = this.#hooks.filter((h) => h !== hook);
    };
  }

  get size(): number {
    return this.#hooks.length;
  }

  async prepare(plan: SpawnPlan, request: SpawnRequest): Promise<{ plan: SpawnPlan; onExit: ExitHook[] }> {
    const onExit: ExitHook[] = [];
    let current = plan;
    for (const hook of this.#hooks) {
      const { onExit: exitHook, ...next } = await hook.prepare({ ...current, args: [...current.args], env: { ...current.env } }, request);
      current = next;
      if (exitHook) onExit.unshift(exitHook);
    }
    return { plan: current, onExit };
  }
}
