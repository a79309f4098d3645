/**
 * The sessions of one server: id → state (cwd, env overrides, unset names). State changes come from
 * two places only: the session routes, and `applyChanges` after a command of the session exited.
 * Changes are applied per key, in the order commands finish, so two concurrent commands can neither
 * corrupt a session nor undo each other's unrelated changes: the last finisher wins on a shared key.
 */
import { randomBytes } from "node:crypto";
import { SESSION_LIMITS, type SessionInfo } from "../../protocol/sessions.ts";
import { ServiceError } from "../../server-kit/service-error.ts";

export interface Session {
  readonly id: string;
  cwd: string;
  readonly env: Map<string, string>;
  readonly unset: Set<string>;
  readonly createdAt: Date;
  updatedAt: Date;
}

/** What one command changed, relative to the state it started with. */
export interface SessionChanges {
  cwd?: string;
  set: Record<string, string>;
  unset: string[];
}

export class SessionStore {
  readonly #sessions = new Map<string, Session>();
  readonly #maxSessions: number;
  readonly defaultCwd: string;

  constructor(defaultCwd: string, maxSessions: number = SESSION_LIMITS.maxSessions) {
    this.defaultCwd = defaultCwd;
    this.#maxSessions = maxSessions;
  }

  create(options: { id?: string; cwd?: string; env?: Record<string, string> } = {}): Session {
    const id = options.id ?? `session_${randomBytes(9).toString("base64url")}`;
    if (this.#sessions.has(id)) throw new ServiceError("SESSION_EXISTS", `session ${id} already exists`, { sessionId: id });
    if (this.#sessions.size >= this.#maxSessions) {
      throw new ServiceError("TOO_MANY_SESSIONS", `too many sessions (limit ${this.#maxSessions})`, { limit: this.#maxSessions });
    }
    const now = new Date();
    const session: Session = {
      id,
      cwd: options.cwd ?? this.defaultCwd,
      env: new Map(Object.entries(options.env ?? {})),
      unset: new Set(),
      createdAt: now,
      updatedAt: now,
    };
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

  delete(id: string): Session {
    const session = this.get(id);
    this.#sessions.delete(id);
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
  }

  clear(): void {
    this.#sessions.clear();
  }
}

export function sessionInfo(session: Session, runningProcesses: number): SessionInfo {
  return {
    id: session.id,
    cwd: session.cwd,
    env: Object.fromEntries(session.env),
    unsetEnv: [...session.unset],
    createdAt: session.createdAt.toISOString(),
    updatedAt: session.updatedAt.toISOString(),
    runningProcesses,
  };
}
