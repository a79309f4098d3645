/** What users import: getSandbox (Workers), getHttpSandbox (anywhere), errors, guards and types. */
export { getSandbox, type GetSandboxOptions } from "./get-sandbox.ts";
export { getHttpSandbox, type HttpSandboxOptions } from "./http.ts";
export { SandboxClient } from "./sandbox-client.ts";
export { SessionClient } from "./session.ts";
export { ProcessHandle } from "./process.ts";
export { Terminal, type TerminalOutputBytes } from "./terminal.ts";
export type { TerminalInfo, TerminalKillResult, TerminalOptions, TerminalOutput, TerminalOutputOptions, TerminalWriteResult } from "../rpc/terminals.ts";
export * from "../rpc/errors.ts";
export { errorFromBody } from "../rpc/error-response.ts";
export * from "../rpc/rpc-errors.ts";
export { isExecResult, isProcess, isProcessStatus } from "./guards.ts";
export type * from "./api.ts";
export type * from "./code-api.ts";
export type { CodeContextOptions, DeleteCodeContextResult, InterruptCodeResult } from "../rpc/code.ts";
export type { CodeContext, CodeEvent, CodeLanguage, CodeLanguageName, Execution, ExecutionError, ExecutionOutcome, Result } from "../../protocol/code.ts";
export type { AxesChart, Chart, ChartType } from "../../protocol/code-chart.ts";
export type { ProcessRecord, ProcessLogs, KillResult, StdinResult } from "../rpc/processes.ts";
export type { SandboxInfo, SandboxDetails, SandboxConfig } from "../rpc/sandbox.ts";
export type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
export type { ExposedPort, ExposedPortsOptions, ExposePortOptions, UnexposePortResult } from "../rpc/ports.ts";
export type { CreateSessionOptions, DeleteSessionResult, EnvVarsUpdate } from "../rpc/sessions.ts";
export type {
  WriteFileOptions,
  WriteStreamOptions,
  WriteFileResult,
  ReadFileOptions,
  FileContent,
  FileStream,
  FileListing,
  ListFilesOptions,
  MkdirOptions,
  DeleteFileOptions,
  MoveOptions,
  ExistsResult,
} from "../rpc/files.ts";
export type { FileInfo } from "../../protocol/files.ts";
export type { SessionInfo } from "../../protocol/sessions.ts";
export type { IsolationSupport } from "../../protocol/isolation.ts";
export type { ExecEvent, LogEvent } from "../../protocol/events.ts";
export type { ExecResult, ProcessStatus } from "../../protocol/process.ts";
export type { RetryPolicy } from "../rpc/resumable-stream.ts";
export type { GitCheckoutOptions, GitCheckoutResult } from "../rpc/git.ts";
export type { ChangesOptions, ChangesResult, WatchEvent, WatchOptions } from "../rpc/watch.ts";
export type { AuditEntry, AuditEvent, AuditPage, AuditQuery, NetworkPolicy, NetworkPolicyInput, NetworkPolicyState, SecretInfo } from "../rpc/network.ts";
export type { AuditStreamOptions } from "./audit-events.ts";
