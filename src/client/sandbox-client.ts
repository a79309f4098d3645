/**
 * The ISandbox API over any SandboxRpc: the Durable Object stub (getSandbox) or the /v1 HTTP API
 * (getHttpSandbox). Commands, processes, env and files come from SandboxOperations; this adds what
 * belongs to the sandbox as a whole: sessions, the code interpreter (code.ts), settings, info, destroy.
 */
import type { CodeContext, CodeEvent, Execution } from "../../protocol/code.ts";
import type { IsolationSupport } from "../../protocol/isolation.ts";
import type { SessionInfo } from "../../protocol/sessions.ts";
import type { ISandbox } from "./api.ts";
import { CodeInterpreterClient } from "./code.ts";
import type { RunCodeOptions, RunCodeStreamOptions } from "./code-api.ts";
import { SandboxOperations } from "./operations.ts";
import { SessionClient } from "./session.ts";
import { Terminal } from "./terminal.ts";
import type { TerminalInfo, TerminalOptions } from "../rpc/terminals.ts";
import type { Connection } from "./connection.ts";
import type { SandboxConfig, SandboxDetails, SandboxInfo, SandboxStatus } from "../rpc/sandbox.ts";
import type { CreateSessionOptions, DeleteSessionResult } from "../rpc/sessions.ts";
import type { BackupInfo, CreateBackupOptions, DeleteBackupResult, DestroyOptions, ExportArchiveOptions, ImportArchiveOptions, ImportArchiveResult, RestoreBackupResult, ListBackupsOptions, ForkOptions, ForkResult, BackupHandle, RestoreBackupOptions } from "../rpc/backups.ts";
import type { CodeContextOptions, DeleteCodeContextResult, InterruptCodeResult } from "../rpc/code.ts";
import type { ExposedPort, ExposedPortsOptions, ExposePortOptions, UnexposePortResult } from "../rpc/ports.ts";
import { auditEvents, type AuditStreamOptions } from "./audit-events.ts";
import type { AuditEvent, AuditPage, AuditQuery, DeleteSecretResult, NetworkPolicyInput, NetworkPolicyState, SecretInfo } from "../rpc/network.ts";

export class SandboxClient extends SandboxOperations implements ISandbox {
  readonly id: string;
  readonly #code: CodeInterpreterClient;

  constructor(id: string, connection: Connection) {
    super(connection);
    this.id = id;
    this.#code = new CodeInterpreterClient(connection);
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

  // ── terminals ────────────────────────────────────────────────────────────

  /** A program on a pseudo-terminal (default: the login shell); it runs until killed or it exits. */
  async createTerminal(options: TerminalOptions = {}): Promise<Terminal> {
    return new Terminal(await this.rpc.createTerminal(options), this.rpc);
  }

  listTerminals(): Promise<TerminalInfo[]> {
    return this.rpc.listTerminals();
  }

  /** Throws TERMINAL_NOT_FOUND for an unknown id. */
  async getTerminal(id: string): Promise<Terminal> {
    return new Terminal(await this.rpc.getTerminal(id), this.rpc);
  }

  // ── code interpreter ─────────────────────────────────────────────────────

  createCodeContext(options?: CodeContextOptions): Promise<CodeContext> {
    return this.#code.createCodeContext(options);
  }

  listCodeContexts(): Promise<CodeContext[]> {
    return this.#code.listCodeContexts();
  }

  getCodeContext(id: string): Promise<CodeContext> {
    return this.#code.getCodeContext(id);
  }

  deleteCodeContext(context: string | CodeContext): Promise<DeleteCodeContextResult> {
    return this.#code.deleteCodeContext(context);
  }

  restartCodeContext(context: string | CodeContext): Promise<CodeContext> {
    return this.#code.restartCodeContext(context);
  }

  runCode(code: string, options?: RunCodeOptions): Promise<Execution> {
    return this.#code.runCode(code, options);
  }

  runCodeStream(code: string, options?: RunCodeStreamOptions): AsyncIterable<CodeEvent> {
    return this.#code.runCodeStream(code, options);
  }

  interruptCode(executionId: string): Promise<InterruptCodeResult> {
    return this.#code.interruptCode(executionId);
  }

  // ── preview ports ────────────────────────────────────────────────────────

  /**
   * A URL for a port inside the sandbox (1024–65535): `{url, port, name}`. Private unless
   * `public: true`: the URL carries a token once, traded for a cookie on first use. Over Workers RPC
   * pass `origin` (the service's) for an absolute path-based URL.
   */
  exposePort(port: number, options?: ExposePortOptions): Promise<ExposedPort> {
    return this.rpc.exposePort(port, options);
  }

  /** The port's URL stops working (404 PORT_NOT_EXPOSED) and its token with it; a port that is not exposed is no error. */
  unexposePort(port: number): Promise<UnexposePortResult> {
    return this.rpc.unexposePort(port);
  }

  getExposedPorts(options?: ExposedPortsOptions): Promise<ExposedPort[]> {
    return this.rpc.getExposedPorts(options);
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

  /** Whether the container runs now, asked without starting it. */
  status(): Promise<SandboxStatus> {
    return this.rpc.status();
  }

  detectIsolation(): Promise<IsolationSupport> {
    return this.rpc.detectIsolation();
  }

  /** `keep: true` saves the durable workspace first; without it the durable workspace is forgotten. */
  destroy(options?: DestroyOptions): Promise<void> {
    return this.rpc.destroy(options);
  }

  // ── snapshots ────────────────────────────────────────────────────────────

  /** A snapshot of the workspace (or `paths`) in the Worker's R2 bucket. */
  createBackup(options?: CreateBackupOptions): Promise<BackupInfo> {
    return this.rpc.createBackup(options);
  }

  listBackups(options?: ListBackupsOptions): Promise<BackupInfo[]> {
    return this.rpc.listBackups(options);
  }

  /** A new sandbox `newId` with this one's workspace (live, or the snapshot `from`), config and env; reach it with getSandbox. */
  fork(newId: string, options?: ForkOptions): Promise<ForkResult> {
    return this.rpc.fork(newId, options);
  }

  /**
   * Replaces the snapshot's paths in its folder (or `options.dir`) with what it holds. Takes the id,
   * or the backup as createBackup returned it (`restoreBackup({ id, dir })`, as Cloudflare's SDK does).
   */
  restoreBackup(backup: string | BackupHandle, options: RestoreBackupOptions = {}): Promise<RestoreBackupResult> {
    if (typeof backup === "string") return this.rpc.restoreBackup(backup, options);
    const dir = options.dir ?? backup.dir;
    return this.rpc.restoreBackup(backup.id, dir === undefined ? options : { ...options, dir });
  }

  deleteBackup(id: string): Promise<DeleteBackupResult> {
    return this.rpc.deleteBackup(id);
  }

  /** The workspace (or `paths`) as a tar stream, gzip'd unless `format: "tar"`. */
  exportArchive(options?: ExportArchiveOptions): Promise<ReadableStream<Uint8Array>> {
    return this.rpc.exportArchive(options);
  }

  /** Extracts a tar or tar.gz stream over the workspace (or the folder `dir`). */
  importArchive(body: ReadableStream<Uint8Array>, options?: ImportArchiveOptions): Promise<ImportArchiveResult> {
    return this.rpc.importArchive(body, options);
  }

  // ── network ──────────────────────────────────────────────────────────────

  /** Where the sandbox may connect and which headers are added on the way out; in force at once. */
  setNetworkPolicy(policy: NetworkPolicyInput): Promise<NetworkPolicyState> {
    return this.rpc.setNetworkPolicy(policy);
  }

  getNetworkPolicy(): Promise<NetworkPolicyState> {
    return this.rpc.getNetworkPolicy();
  }

  /** Write-only: listed by name, never read back, never inside the sandbox. */
  setSecret(name: string, value: string): Promise<SecretInfo> {
    return this.rpc.setSecret(name, value);
  }

  listSecrets(): Promise<SecretInfo[]> {
    return this.rpc.listSecrets();
  }

  deleteSecret(name: string): Promise<DeleteSecretResult> {
    return this.rpc.deleteSecret(name);
  }

  /** What went out (or was refused) after `since`: a page of the audit trail. */
  getNetworkAudit(query?: AuditQuery): Promise<AuditPage> {
    return this.rpc.getNetworkAudit(query);
  }

  /** The audit trail as it grows: every entry after `since`, then each new one as it happens, across broken connections. */
  streamNetworkAudit(options: AuditStreamOptions = {}): AsyncIterable<AuditEvent> {
    return auditEvents(this.rpc, options, this.connection.retry);
  }
}
