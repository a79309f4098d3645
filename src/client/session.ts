/**
 * A session-bound sandbox: the same commands, process, env and file methods as the sandbox, each
 * run in this session (its cwd and env carry over between commands; listProcesses and
 * killAllProcesses see only its processes). Returned by sandbox.createSession() and getSession().
 */
import type { SessionInfo } from "../../protocol/sessions.ts";
import type { ExecutionSession } from "./api.ts";
import { SandboxOperations } from "./operations.ts";
import type { Connection } from "./connection.ts";
import type { DeleteSessionResult } from "../rpc/sessions.ts";

export class SessionClient extends SandboxOperations implements ExecutionSession {
  readonly id: string;
  readonly sandboxId: string;
  /** The session as it was when this object was made; info() asks again. */
  readonly session: SessionInfo;

  constructor(sandboxId: string, session: SessionInfo, connection: Connection) {
    super(connection, session.id);
    this.id = session.id;
    this.sandboxId = sandboxId;
    this.session = session;
  }

  info(): Promise<SessionInfo> {
    return this.rpc.getSession(this.id);
  }

  delete(): Promise<DeleteSessionResult> {
    return this.rpc.deleteSession(this.id);
  }
}
