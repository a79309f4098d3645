/** What users import: getSandbox (Workers), getHttpSandbox (anywhere), errors, guards and types. */
export { getSandbox, type GetSandboxOptions } from "./get-sandbox.ts";
export { getHttpSandbox, type HttpSandboxOptions } from "./http.ts";
export { SandboxClient } from "./sandbox-client.ts";
export { SessionClient } from "./session.ts";
export { ProcessHandle } from "./process.ts";
export * from "./errors.ts";
export { isExecResult, isProcess, isProcessStatus } from "./guards.ts";
export type * from "./api.ts";
export type {
  ProcessRecord,
  ProcessLogs,
  KillResult,
  StdinResult,
  SandboxInfo,
  SandboxDetails,
  SandboxConfig,
  SandboxRpc,
  CreateSessionOptions,
  DeleteSessionResult,
  EnvVarsUpdate,
  WriteFileOptions,
  WriteStreamOptions,
  WriteFileResult,
  ReadFileOptions,
  FileContent,
  FileStream,
  FileInfo,
  FileListing,
  ListFilesOptions,
  MkdirOptions,
  DeleteFileOptions,
  MoveOptions,
  ExistsResult,
  SessionInfo,
  IsolationSupport,
} from "./types.ts";
export type { ExecEvent, LogEvent } from "../../protocol/events.ts";
export type { ExecResult, ProcessStatus } from "../../protocol/process.ts";
export type { RetryPolicy } from "./resumable-stream.ts";
