/**
 * The ISandbox API over any SandboxRpc: the Durable Object stub (getSandbox) or the /v1 HTTP API
 * (getHttpSandbox). Commands, processes, env and files come from SandboxOperations; this adds what
 * belongs to the sandbox as a whole: sessions, settings, info, destroy.
 */
import type { IsolationSupport } from "../../protocol/isolation.ts";
import type { SessionInfo } from "../../protocol/sessions.ts";
import type { ISandbox } from "./api.ts";
import { SandboxOperations } from "./operations.ts";
import { SessionClient } from "./session.ts";
import type { Connection } from "./connection.ts";
import type { SandboxConfig, SandboxDetails, SandboxInfo } from "../rpc/sandbox.ts";
import type { CreateSessionOptions, DeleteSessionResult } from "../rpc/sessions.ts";

export class SandboxClient extends SandboxOperations implements ISandbox {
  readonly id: string;

  constructor(id: string, connection: Connection) {
    super(connection);
    this.id = id;
  }

  cleanupCompletedProcesses(): Promise<number> {
    return this.rpc.cleanupCompletedProcesses();
  }

  // ── sessions ─────────────────────────────────────────────────────────────

  async createSession(options: CreateSessionOptions = {}): Promise<SessionClient> {
    return new SessionClient(this.id, await this.rpc.createSession(options), this.connection);
  }

  async getSession(id: string): Promise<SessionClient> {
    return new SessionClient(this.id, await this.rpc.getSession(id), this.connection);
  }

  listSessions(): Promise<SessionInfo[]> {
    return this.rpc.listSessions();
  }

  deleteSession(id: string): Promise<DeleteSessionResult> {
    return this.rpc.deleteSession(id);
  }

  // ── the sandbox as a whole ───────────────────────────────────────────────

  configure(config: SandboxConfig): Promise<void> {
    return this.rpc.configure(config);
  }

  info(): Promise<SandboxInfo> {
    return this.rpc.info();
  }

  getInfo(): Promise<SandboxDetails> {
    return this.rpc.getInfo();
  }

  getInstructions(): Promise<string> {
    return this.rpc.getInstructions();
  }

  detectIsolation(): Promise<IsolationSupport> {
    return this.rpc.detectIsolation();
  }

  destroy(): Promise<void> {
    return this.rpc.destroy();
  }
}
