/**
 * The sessions of one server: id → shell state (cwd, env overrides, unset names, functions, aliases,
 * shell options) and the session's default time limit. State changes come from two places only: the
 * session routes, and `applyChanges` after a command of the session exited. Changes are applied per
 * key (a variable, an option), in the order commands finish, so two concurrent commands can neither
 * corrupt a session nor undo each other's unrelated changes: the last finisher wins on a shared key.
 * Functions and aliases are one key each (their whole definition list).
 *
 * The default session always exists: the store starts with it, and deleting it puts a fresh one in
 * its place.
 */
import { randomBytes } from "node:crypto";
import { DEFAULT_SESSION_ID, SESSION_LIMITS, type SessionInfo } from "../../protocol/sessions.ts";
import { ServiceError } from "../../server-kit/service-error.ts";
import { definedNames, optionCommand, restoreScript, type ShellOptionChanges } from "./shell-state.ts";

export interface Session {
  readonly id: string;
  cwd: string;
  readonly env: Map<string, string>;
  readonly unset: Set<string>;
  /** `declare -f` / `alias -p` as the session's last changing command left them ("" for none). */
  functions: string;
  aliases: string;
  /** Options away from bash's defaults: `set -o NAME` / `shopt -s NAME` (and their off forms) → on. */
  readonly options: Map<string, boolean>;
  /** What restores functions, aliases and options in a command, built when they change ("" for nothing). */
  restore: string;
  readonly commandTimeoutMs: number | undefined;
  readonly createdAt: Date;
  updatedAt: Date;
}

/** What one command changed, relative to the state it started with. */
export interface SessionChanges {
  cwd?: string;
  set: Record<string, string>;
  unset: string[];
  functions?: string;
  aliases?: string;
  /** Options the command changed: key → its value now, and whether that is bash's default. */
  options?: ShellOptionChanges;
}

export interface CreateSessionFields {
  id?: string;
  cwd?: string;
  env?: Record<string, string>;
  commandTimeoutMs?: number;
}

export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #maxSessions: number;
  readonly defaultCwd: string;

  constructor(defaultCwd: string, maxSessions: number = SESSION_LIMITS.maxSessions) {
    this.defaultCwd = defaultCwd;
    this.#maxSessions = maxSessions;
    this.#addDefault();
  }

  create(options: CreateSessionFields = {}): Session {
    const id = options.id ?? `session_${randomBytes(9).toString("base64url")}`;
    if (this.#sessions.has(id)) throw new ServiceError("SESSION_EXISTS", `session ${id} already exists`, { sessionId: id });
    if (this.#sessions.size >= this.#maxSessions) {
      throw new ServiceError("TOO_MANY_SESSIONS", `too many sessions (limit ${this.#maxSessions})`, { limit: this.#maxSessions });
    }
    const session = this.#newSession(id, options);
    this.#sessions.set(id, session);
    return session;
  }

  find(id: string): Session | undefined {
    return this.#sessions.get(id);
  }

  get(id: string): Session {
    const session = this.#sessions.get(id);
    if (!session) throw new ServiceError("SESSION_NOT_FOUND", `session ${id} not found`, { sessionId: id });
    return session;
  }

  /** A command may name a session that does not exist yet: it is created on first use. */
  getOrCreate(id: string): Session {
    return this.#sessions.get(id) ?? this.create({ id });
  }

  list(): Session[] {
    return [...this.#sessions.values()];
  }

  /** True when `session` is still the live entry under its id (not deleted, not replaced). */
  isCurrent(session: Session): boolean {
    return this.#sessions.get(session.id) === session;
  }

  /** Removes a session; the default session is replaced by a fresh one. */
  delete(id: string): Session {
    const session = this.get(id);
    this.#sessions.delete(id);
    if (id === DEFAULT_SESSION_ID) this.#addDefault();
    return session;
  }

  /** `null` unsets (hides the variable from the session's commands). */
  setEnv(session: Session, vars: Record<string, string | null | undefined>): void {
    for (const [name, value] of Object.entries(vars)) {
      if (value === null || value === undefined) {
        session.env.delete(name);
        session.unset.add(name);
      } else {
        session.env.set(name, value);
        session.unset.delete(name);
      }
    }
    session.updatedAt = new Date();
  }

  applyChanges(session: Session, changes: SessionChanges): void {
    if (!this.isCurrent(session)) return;
    if (changes.cwd !== undefined) session.cwd = changes.cwd;
    this.setEnv(session, { ...Object.fromEntries(changes.unset.map((name) => [name, null])), ...changes.set });
    if (changes.functions === undefined && changes.aliases === undefined && changes.options === undefined) return;
    const functions = changes.functions ?? session.functions;
    const aliases = changes.aliases ?? session.aliases;
    const options = new Map(session.options);
    for (const [key, { on, isDefault }] of changes.options ?? []) {
      if (isDefault) options.delete(key);
      else options.set(key, on);
    }
    const restore = restoreScript(functions, aliases, options);
    // Too large to reach a command (see SESSION_LIMITS): the session keeps what it had.
    if (Buffer.byteLength(restore) > SESSION_LIMITS.maxShellStateBytes) return;
    session.functions = functions;
    session.aliases = aliases;
    session.options.clear();
    for (const [key, on] of options) session.options.set(key, on);
    session.restore = restore;
  }

  /** Forgets every session but a fresh default one. */
  clear(): void {
    this.#sessions.clear();
    this.#addDefault();
  }

  #addDefault(): void {
    this.#sessions.set(DEFAULT_SESSION_ID, this.#newSession(DEFAULT_SESSION_ID, {}));
  }

  #newSession(id: string, options: CreateSessionFields): Session {
    const now = new Date();
    return {
      id,
      cwd: options.cwd ?? this.defaultCwd,
      env: new Map(Object.entries(options.env ?? {})),
      unset: new Set(),
      functions: "",
      aliases: "",
      options: new Map(),
      restore: "",
      commandTimeoutMs: options.commandTimeoutMs,
      createdAt: now,
      updatedAt: now,
    };
  }
}

export function sessionInfo(session: Session, runningProcesses: number): SessionInfo {
  const { functions, aliases } = definedNames(session.functions, session.aliases);
  return {
    id: session.id,
    cwd: session.cwd,
    env: Object.fromEntries(session.env),
    unsetEnv: [...session.unset],
    ...(session.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: session.commandTimeoutMs }),
    functions,
    aliases,
    shellOptions: [...session.options].map(([key, on]) => optionCommand(key, on)),
    ...(session.id === DEFAULT_SESSION_ID ? { isDefault: true } : {}),
    createdAt: session.createdAt.toISOString(),
    updatedAt: session.updatedAt.toISOString(),
    runningProcesses,
  };
}
