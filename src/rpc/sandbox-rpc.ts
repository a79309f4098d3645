/**
 * The Sandbox Durable Object's RPC surface: what the Durable Object implements, what a Workers RPC
 * stub of it offers, and what the HTTP client implements over /v1 (each method's HTTP form, and the
 * method list: ./bindings/). Streams are SSE bytes (file streams: raw bytes); errors are thrown with
 * their wire code encoded (see rpc-errors.ts).
 */
import type { CodeContext, Execution } from "../../protocol/code.ts";
import type { ExecResult } from "../../protocol/process.ts";
import type { IsolationSupport } from "../../protocol/isolation.ts";
import type { SessionInfo } from "../../protocol/sessions.ts";
import type {
  DeleteFileOptions,
  DeleteFileResult,
  ExistsResult,
  FileContent,
  FileListing,
  FileStream,
  ListFilesOptions,
  MkdirOptions,
  MkdirResult,
  MoveFileResult,
  MoveOptions,
  ReadFileOptions,
  RenameFileResult,
  WriteFileOptions,
  WriteFileResult,
  WriteStreamOptions,
} from "./files.ts";
import type {
  ExecRequestOptions,
  HandleRef,
  KillAllRequest,
  KillResult,
  ListRequest,
  ProcessLogs,
  ProcessRecord,
  StartRequestOptions,
  StdinOptions,
  StdinResult,
  StreamResumeRequest,
} from "./processes.ts";
import type { GitCheckoutOptions, GitCheckoutResult } from "./git.ts";
import type { ChangesOptions, ChangesResult, WatchOptions } from "./watch.ts";
import type { CodeContextOptions, DeleteCodeContextResult, InterruptCodeResult, RunCodeRequestOptions } from "./code.ts";
import type { TerminalIdResult, TerminalInfo, TerminalKillResult, TerminalOptions, TerminalOutput, TerminalOutputOptions, TerminalWriteResult } from "./terminals.ts";
import type { SandboxConfig, SandboxDetails, SandboxInfo, SandboxStatus } from "./sandbox.ts";
import type { ExposedPort, ExposedPortsOptions, ExposePortOptions, UnexposePortResult } from "./ports.ts";
import type { BackupInfo, CreateBackupOptions, DeleteBackupResult, DestroyOptions, ExportArchiveOptions, ForkOptions, ForkResult, ImportArchiveOptions, ImportArchiveResult, ListBackupsOptions, RestoreBackupOptions, RestoreBackupResult } from "./backups.ts";
import type { AuditPage, AuditQuery, AuditResume, DeleteSecretResult, NetworkPolicyInput, NetworkPolicyState, SecretInfo } from "./network.ts";
import type { CreateSessionOptions, DeleteSessionResult, EnvVarsUpdate, SetEnvOptions } from "./sessions.ts";

export interface SandboxRpc {
  exec(command: string, options?: ExecRequestOptions): Promise<ExecResult>;
  /** Exec events (`start`, output, then `complete` with the container's result, or `error`). */
  execStream(command: string, options?: ExecRequestOptions): Promise<ReadableStream<Uint8Array>>;
  /** The exec events of a running or just finished exec after `since`: how a broken execStream resumes. */
  resumeExecStream(processId: string, options?: StreamResumeRequest): Promise<ReadableStream<Uint8Array>>;
  startProcess(command: string, options?: StartRequestOptions): Promise<ProcessRecord>;
  listProcesses(options?: ListRequest): Promise<ProcessRecord[]>;
  getProcess(id: string, ref?: HandleRef): Promise<ProcessRecord | null>;
  killProcess(id: string, signal?: string | number, ref?: HandleRef): Promise<KillResult>;
  killAllProcesses(options?: KillAllRequest): Promise<number>;
  streamProcessLogs(id: string, options?: StreamResumeRequest): Promise<ReadableStream<Uint8Array>>;
  getProcessLogs(id: string, ref?: HandleRef): Promise<ProcessLogs>;
  cleanupCompletedProcesses(): Promise<number>;
  writeStdin(id: string, data: string, options?: StdinOptions): Promise<StdinResult>;
  closeStdin(id: string, ref?: HandleRef): Promise<StdinResult>;

  createSession(options?: CreateSessionOptions): Promise<SessionInfo>;
  /** Throws SESSION_NOT_FOUND for an unknown id. */
  getSession(id: string): Promise<SessionInfo>;
  listSessions(): Promise<SessionInfo[]>;
  /** Deletes the session and kills its processes. */
  deleteSession(id: string): Promise<DeleteSessionResult>;
  /** Sandbox-level variables are kept by the sandbox (they survive a container restart); a session's live in the container. */
  setEnvVars(vars: EnvVarsUpdate, options?: SetEnvOptions): Promise<void>;

  writeFile(path: string, content: string, options?: WriteFileOptions): Promise<WriteFileResult>;
  /** Streams the bytes into the file as they come (any size): never held whole in memory on the way. */
  writeFileStream(path: string, body: ReadableStream<Uint8Array>, options?: WriteStreamOptions): Promise<WriteFileResult>;
  /** The whole file (up to 16 MiB): text as utf8, binary as base64 unless `encoding` says otherwise. */
  readFile(path: string, options?: ReadFileOptions): Promise<FileContent>;
  readFileStream(path: string): Promise<FileStream>;
  mkdir(path: string, options?: MkdirOptions): Promise<MkdirResult>;
  deleteFile(path: string, options?: DeleteFileOptions): Promise<DeleteFileResult>;
  /** Renames to exactly `newPath`. */
  renameFile(oldPath: string, newPath: string, options?: MoveOptions): Promise<RenameFileResult>;
  /** `mv`: into `destinationPath` when it is a directory, else to it. */
  moveFile(sourcePath: string, destinationPath: string, options?: MoveOptions): Promise<MoveFileResult>;
  listFiles(path?: string, options?: ListFilesOptions): Promise<FileListing>;
  exists(path: string): Promise<ExistsResult>;
  /** Changes under a directory as they happen: SSE of WatchEvent (`watching` first), until cancelled. */
  watch(path: string, options?: WatchOptions): Promise<ReadableStream<Uint8Array>>;
  /** Whether anything under `path` changed since a version an earlier call returned; the current version. */
  checkChanges(path: string, options?: ChangesOptions): Promise<ChangesResult>;

  /** `git clone` into the workspace, run in the sandbox like a command (its session, isolation, time limit). */
  gitCheckout(repoUrl: string, options?: GitCheckoutOptions): Promise<GitCheckoutResult>;

  /** A new code context: a Python or JavaScript/TypeScript interpreter that keeps its state between runs. */
  createCodeContext(options?: CodeContextOptions): Promise<CodeContext>;
  listCodeContexts(): Promise<CodeContext[]>;
  /** Throws CODE_CONTEXT_NOT_FOUND for an unknown id (contexts die with their container). */
  getCodeContext(id: string): Promise<CodeContext>;
  /** Deletes the context; its running and waiting runs end. */
  deleteCodeContext(id: string): Promise<DeleteCodeContextResult>;
  /** A fresh interpreter under the same id (the state is gone). */
  restartCodeContext(id: string): Promise<CodeContext>;
  /** Runs a cell to its end: errors in the code are the Execution's `error`, not a thrown error. */
  runCode(code: string, options?: RunCodeRequestOptions): Promise<Execution>;
  /** Code events (`start`, output, `result`, `error`, then `complete`) as they happen. */
  runCodeStream(code: string, options?: RunCodeRequestOptions): Promise<ReadableStream<Uint8Array>>;
  /** The code events of a running or just finished run after `since`: how a broken runCodeStream resumes. */
  resumeCodeStream(executionId: string, options?: StreamResumeRequest): Promise<ReadableStream<Uint8Array>>;
  /** Interrupts a run (KeyboardInterrupt in Python; JavaScript execution is terminated); the context keeps its state. */
  interruptCode(executionId: string): Promise<InterruptCodeResult>;

  /** A program on a pseudo-terminal (default: the login shell), kept until killed; viewers come and go. */
  createTerminal(options?: TerminalOptions): Promise<TerminalInfo>;
  listTerminals(): Promise<TerminalInfo[]>;
  /** Throws TERMINAL_NOT_FOUND for an unknown id (terminals die with their container). */
  getTerminal(id: string): Promise<TerminalInfo>;
  /** Input as the keyboard would type it: text as UTF-8, or bytes. */
  writeTerminal(id: string, data: string | Uint8Array): Promise<TerminalWriteResult>;
  /** The program sees SIGWINCH and the new size. */
  resizeTerminal(id: string, cols: number, rows: number): Promise<TerminalInfo>;
  /** Ctrl-C: SIGINT to the foreground job. */
  interruptTerminal(id: string): Promise<TerminalIdResult>;
  /** Signals the terminal's whole process group (default SIGTERM, then SIGKILL after the grace period). */
  killTerminal(id: string, signal?: string | number): Promise<TerminalKillResult>;
  /** Resolves with the record once the program has exited. */
  waitForTerminal(id: string): Promise<TerminalInfo>;
  /** The retained output after a cursor, and the cursor to pass next time. */
  terminalOutput(id: string, options?: TerminalOutputOptions): Promise<TerminalOutput>;
  /** Kills (when running) and forgets the terminal. */
  deleteTerminal(id: string): Promise<TerminalIdResult>;
  /** Upgrades `request` (a WebSocket request, `?since=<cursor>` optional) to a viewer of the terminal: the 101 response. */
  connectTerminal(id: string, request: Request): Promise<Response>;

  /**
   * Makes a port inside the sandbox (1024–65535) reachable at a preview URL, served by the running
   * container (started if none runs) until it stops; private unless `public: true` (the URL carries a
   * token once: `token`, or the port's current one, or a new random one). Exposing again revives a
   * stale URL or rotates its token. Throws INVALID_PORT, INVALID_REQUEST, PREVIEW_TOKEN_IN_USE.
   */
  exposePort(port: number, options?: ExposePortOptions): Promise<ExposedPort>;
  /** Stops serving the port's URL (its token dies with it); idempotent. */
  unexposePort(port: number): Promise<UnexposePortResult>;
  /** The ports the running container serves (none while no container runs). */
  getExposedPorts(options?: ExposedPortsOptions): Promise<ExposedPort[]>;

  /** Sandbox-wide settings (sleepAfter, envVars, isolation), kept by the sandbox. */
  configure(config: SandboxConfig): Promise<void>;
  info(): Promise<SandboxInfo>;
  /** Whether the container runs now; unlike every other call, it never starts one. */
  status(): Promise<SandboxStatus>;
  /** Status and resources (memory, CPUs, disk), the isolation in effect, and the generation. */
  getInfo(): Promise<SandboxDetails>;
  /** A short description of the sandbox for an agent's tool prompt. */
  getInstructions(): Promise<string>;
  /** What isolation the machine running this sandbox offers (locally: the container runtime's machine). */
  detectIsolation(): Promise<IsolationSupport>;
  /**
   * Stops the container now (SIGKILL); the next call starts a fresh one. With `keep: true` the
   * durable workspace is saved first; without, it is forgotten (snapshots stay).
   */
  destroy(options?: DestroyOptions): Promise<void>;

  /** A snapshot of the workspace (or the listed paths) in the Worker's R2 bucket. */
  createBackup(options?: CreateBackupOptions): Promise<BackupInfo>;
  /** This sandbox's snapshots, oldest first (with every label asked for); expired ones are gone. */
  listBackups(options?: ListBackupsOptions): Promise<BackupInfo[]>;
  /** Replaces the snapshot's paths in the running sandbox with what it holds. BACKUP_NOT_FOUND for another sandbox's id. */
  restoreBackup(id: string, options?: RestoreBackupOptions): Promise<RestoreBackupResult>;
  deleteBackup(id: string): Promise<DeleteBackupResult>;
  /**
   * A new sandbox `newId` with this one's workspace (live, or the snapshot `from`), config and env,
   * none of its processes; the bytes go container to container (or bucket to container).
   */
  fork(newId: string, options?: ForkOptions): Promise<ForkResult>;
  /** The workspace (or paths of it) as a tar stream, gzip'd unless `format: "tar"`; links stay links. */
  exportArchive(options?: ExportArchiveOptions): Promise<ReadableStream<Uint8Array>>;
  /** Extracts a tar or tar.gz stream over the workspace; nothing can land outside it (INVALID_ARCHIVE). */
  importArchive(body: ReadableStream<Uint8Array>, options?: ImportArchiveOptions): Promise<ImportArchiveResult>;

  /**
   * Where the sandbox may connect and which headers the proxy adds on the way out: in force at once
   * for running processes. On Cloudflare, NETWORK_POLICY_UNAVAILABLE names each rule the platform's
   * interception cannot enforce.
   */
  setNetworkPolicy(policy: NetworkPolicyInput): Promise<NetworkPolicyState>;
  getNetworkPolicy(): Promise<NetworkPolicyState>;
  /** A secret injection rules name; write-only (listed by name, never read back). */
  setSecret(name: string, value: string): Promise<SecretInfo>;
  listSecrets(): Promise<SecretInfo[]>;
  /** Throws SECRET_NOT_FOUND for a name the sandbox does not have. */
  deleteSecret(name: string): Promise<DeleteSecretResult>;
  /** Outbound connections, HTTP requests and lookups after `since`, with the decision and the rule behind it. */
  getNetworkAudit(query?: AuditQuery): Promise<AuditPage>;
  /** The audit trail as it grows: SSE `audit` events (id = seq) after `since`, and `dropped` when the bounded log lost some. */
  streamNetworkAudit(resume?: AuditResume): Promise<ReadableStream<Uint8Array>>;
}
