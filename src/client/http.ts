/**
 * getHttpSandbox(id, {url, token}) — the same sandbox API for callers outside Workers (Node, Deno,
 * browsers, other clouds), over the Worker's /v1 HTTP API. Streams reconnect by themselves from the
 * last event id when a connection breaks, as they do over Workers RPC (the client does it, with the
 * `retry` policy given here: bounded retries with backoff, then SandboxConnectionError).
 */
import type { CodeContext, Execution } from "../../protocol/code.ts";
import type { IsolationSupport } from "../../protocol/isolation.ts";
import type { ExecResult } from "../../protocol/process.ts";
import { errorFromResponse } from "../rpc/error-response.ts";
import { ProcessNotFoundError, SandboxConnectionError } from "../rpc/errors.ts";
import { fileStreamInfo } from "../rpc/file-headers.ts";
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
} from "../rpc/files.ts";
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
} from "../rpc/processes.ts";
import { terminalInputBody, type TerminalInfo, type TerminalKillResult, type TerminalOptions, type TerminalOutput, type TerminalOutputOptions, type TerminalWriteResult } from "../rpc/terminals.ts";
import type { GitCheckoutOptions, GitCheckoutResult } from "../rpc/git.ts";
import type { ChangesOptions, ChangesResult, WatchOptions } from "../rpc/watch.ts";
import type { BackupInfo, CreateBackupOptions, DeleteBackupResult, DestroyOptions, ExportArchiveOptions, ImportArchiveResult, RestoreBackupResult } from "../rpc/backups.ts";
import type { CodeContextOptions, DeleteCodeContextResult, InterruptCodeResult, RunCodeRequestOptions } from "../rpc/code.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { SandboxConfig, SandboxDetails, SandboxInfo } from "../rpc/sandbox.ts";
import type { ExposedPort, ExposedPortsOptions, ExposePortOptions, UnexposePortResult } from "../rpc/ports.ts";
import type { EnvVarsUpdate, SetEnvOptions } from "../rpc/sessions.ts";
import { assertSandboxId } from "./sandbox-id.ts";
import type { RetryPolicy } from "../rpc/resumable-stream.ts";
import { SandboxClient } from "./sandbox-client.ts";
import { derivedCalls, type Query } from "./http-calls.ts";

export interface HttpSandboxOptions {
  /** Base URL of the Worker, e.g. `http://127.0.0.1:8787` or `https://sandbox.example.workers.dev`. */
  url: string;
  /** SANDBOX_API_TOKEN of the Worker. */
  token?: string;
  /** Reconnects of broken streams. */
  retry?: RetryPolicy;
  fetch?: typeof fetch;
  headers?: Record<string, string>;
}

interface RequestParts {
  query?: Query;
  /** JSON body. */
  body?: unknown;
  /** Raw byte body, streamed as it is read. */
  bytes?: ReadableStream<Uint8Array>;
  headers?: Record<string, string>;
}

const segment = (value: string) => encodeURIComponent(value);

/** The calls derived from the method bindings are own properties of the transport (./http-calls.ts). */
interface HttpTransport extends SandboxRpc {}

/** The calls the bindings cannot derive are its methods. */
class HttpTransport {
  readonly #base: string;
  readonly #options: HttpSandboxOptions;
  readonly #fetch: typeof fetch;

  constructor(id: string, options: HttpSandboxOptions) {
    this.#base = `${options.url.replace(/\/+$/, "")}/v1/sandboxes/${encodeURIComponent(id)}`;
    this.#options = options;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    Object.assign(this, derivedCalls({ json: (method, path, init) => this.#json(method, path, init), stream: (method, path, init) => this.#stream(method, path, init) }));
  }

  async #request(method: string, path: string, init: RequestParts = {}): Promise<Response> {
    const url = new URL(this.#base + path);
    for (const [name, value] of Object.entries(init.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { ...this.#options.headers, ...init.headers };
    if (this.#options.token) headers.authorization = `Bearer ${this.#options.token}`;
    const request: RequestInit & { duplex?: "half" } = { method, headers };
    if (init.bytes !== undefined) {
      headers["content-type"] = "application/octet-stream";
      request.body = init.bytes;
      request.duplex = "half"; // what fetch needs to send a stream body (in Node; ignored where not)
    } else if (init.body !== undefined) {
      headers["content-type"] = "application/json";
      request.body = JSON.stringify(init.body);
    }
    let response: Response;
    try {
      response = await this.#fetch(url, request);
    } catch (error) {
      throw new SandboxConnectionError(`Cannot reach the sandbox service at ${this.#options.url}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    if (!response.ok) throw await errorFromResponse(response);
    return response;
  }

  async #json<T>(method: string, path: string, init?: RequestParts): Promise<T> {
    const response = await this.#request(method, path, init);
    return response.status === 204 ? (undefined as T) : ((await response.json()) as T);
  }

  async #stream(method: string, path: string, init: { query?: Query; body?: unknown; lastEventId?: string }): Promise<ReadableStream<Uint8Array>> {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (init.lastEventId !== undefined) headers["last-event-id"] = init.lastEventId;
    const response = await this.#request(method, path, { ...init, headers });
    if (!response.body) throw new SandboxConnectionError(`${path}: response without a body`);
    return response.body;
  }

  async getProcess(id: string, ref: HandleRef = {}): Promise<ProcessRecord | null> {
    try {
      return (await this.#json<{ process: ProcessRecord }>("GET", `/processes/${encodeURIComponent(id)}`, { query: { generation: ref.generation } })).process;
    } catch (error) {
      if (error instanceof ProcessNotFoundError) return null;
      throw error;
    }
  }

  /** A resumed stream starts after Last-Event-ID (as EventSource sends it), from the byte offsets in the query. */
  #resumeFrom(options: StreamResumeRequest): { query: Query; lastEventId?: string } {
    const { generation, stdoutOffset, stderrOffset, since } = options;
    return { query: { generation, stdoutOffset, stderrOffset }, ...(since === undefined ? {} : { lastEventId: String(since) }) };
  }

  writeStdin(id: string, data: string, options: StdinOptions = {}): Promise<StdinResult> {
    const { generation, ...body } = options;
    return this.#json("POST", `/processes/${encodeURIComponent(id)}/stdin`, { query: { generation }, body: { data, ...body } });
  }

  closeStdin(id: string, ref: HandleRef = {}): Promise<StdinResult> {
    return this.#json("POST", `/processes/${encodeURIComponent(id)}/stdin`, { query: { generation: ref.generation }, body: { close: true } });
  }

  // ── sessions, env ────────────────────────────────────────────────────────

  async setEnvVars(vars: EnvVarsUpdate, options: SetEnvOptions = {}): Promise<void> {
    // JSON has no undefined: null unsets.
    const update = Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, value ?? null]));
    await this.#json("POST", "/env", { body: { vars: update, ...options } });
  }

  // ── files ────────────────────────────────────────────────────────────────

  writeFileStream(path: string, body: ReadableStream<Uint8Array>, options: WriteStreamOptions = {}): Promise<WriteFileResult> {
    const mode = typeof options.mode === "number" ? options.mode.toString(8) : options.mode;
    return this.#json("PUT", "/files/content", { query: { path, createParents: options.createParents, mode }, bytes: body });
  }

  async readFileStream(path: string): Promise<FileStream> {
    const response = await this.#request("GET", "/files/content", { query: { path } });
    if (!response.body) throw new SandboxConnectionError(`${path}: response without a body`);
    return { ...fileStreamInfo(response.headers, path), stream: response.body };
  }

  // ── code interpreter ─────────────────────────────────────────────────────

  async createTerminal(options: TerminalOptions = {}): Promise<TerminalInfo> {
    return (await this.#json<{ terminal: TerminalInfo }>("POST", "/terminals", { body: options })).terminal;
  }

  async listTerminals(): Promise<TerminalInfo[]> {
    return (await this.#json<{ terminals: TerminalInfo[] }>("GET", "/terminals")).terminals;
  }

  async getTerminal(id: string): Promise<TerminalInfo> {
    return (await this.#json<{ terminal: TerminalInfo }>("GET", `/terminals/${segment(id)}`)).terminal;
  }

  writeTerminal(id: string, data: string | Uint8Array): Promise<TerminalWriteResult> {
    return this.#json("POST", `/terminals/${segment(id)}/write`, { body: terminalInputBody(data) });
  }

  async resizeTerminal(id: string, cols: number, rows: number): Promise<TerminalInfo> {
    return (await this.#json<{ terminal: TerminalInfo }>("POST", `/terminals/${segment(id)}/resize`, { body: { cols, rows } })).terminal;
  }

  async interruptTerminal(id: string): Promise<void> {
    await this.#json("POST", `/terminals/${segment(id)}/interrupt`);
  }

  killTerminal(id: string, signal?: string | number): Promise<TerminalKillResult> {
    return this.#json("POST", `/terminals/${segment(id)}/kill`, { query: { signal } });
  }

  async waitForTerminal(id: string): Promise<TerminalInfo> {
    return (await this.#json<{ terminal: TerminalInfo }>("GET", `/terminals/${segment(id)}/wait`)).terminal;
  }

  terminalOutput(id: string, options: TerminalOutputOptions = {}): Promise<TerminalOutput> {
    return this.#json("GET", `/terminals/${segment(id)}/output`, { query: { since: options.since } });
  }

  deleteTerminal(id: string): Promise<{ terminalId: string }> {
    return this.#json("DELETE", `/terminals/${segment(id)}`);
  }

  /** Where fetch can upgrade (Workers): the 101 response with the socket. `?since=` of `request` is passed on. */
  async connectTerminal(id: string, request: Request): Promise<Response> {
    const since = new URL(request.url).searchParams.get("since") ?? undefined;
    return this.#request("GET", `/terminals/${segment(id)}/ws`, { query: { since }, headers: { upgrade: "websocket" } });
  }

  async createCodeContext(options: CodeContextOptions = {}): Promise<CodeContext> {
    return (await this.#json<{ context: CodeContext }>("POST", "/code/contexts", { body: options })).context;
  }

  async listCodeContexts(): Promise<CodeContext[]> {
    return (await this.#json<{ contexts: CodeContext[] }>("GET", "/code/contexts")).contexts;
  }

  async getCodeContext(id: string): Promise<CodeContext> {
    return (await this.#json<{ context: CodeContext }>("GET", `/code/contexts/${segment(id)}`)).context;
  }

  deleteCodeContext(id: string): Promise<DeleteCodeContextResult> {
    return this.#json("DELETE", `/code/contexts/${segment(id)}`);
  }

  async restartCodeContext(id: string): Promise<CodeContext> {
    return (await this.#json<{ context: CodeContext }>("POST", `/code/contexts/${segment(id)}/restart`)).context;
  }

  runCode(code: string, options: RunCodeRequestOptions = {}): Promise<Execution> {
    return this.#json("POST", "/code/run", { body: { ...options, code } });
  }

  runCodeStream(code: string, options: RunCodeRequestOptions = {}): Promise<ReadableStream<Uint8Array>> {
    return this.#stream("POST", "/code/run/stream", { body: { ...options, code } });
  }

  resumeCodeStream(executionId: string, options: StreamResumeRequest = {}): Promise<ReadableStream<Uint8Array>> {
    return this.#stream("GET", `/code/executions/${segment(executionId)}/stream`, this.#resumeFrom(options));
  }

  interruptCode(executionId: string): Promise<InterruptCodeResult> {
    return this.#json("POST", `/code/executions/${segment(executionId)}/interrupt`);
  }

  // ── preview ports ────────────────────────────────────────────────────────

  /** URLs are made on the service's origin (or its preview domain): an `origin` given here is not needed. */
  exposePort(port: number, options: ExposePortOptions = {}): Promise<ExposedPort> {
    const { origin: _origin, ...rest } = options;
    return this.#json("POST", "/ports", { body: { ...rest, port } });
  }

  unexposePort(port: number): Promise<UnexposePortResult> {
    return this.#json("DELETE", `/ports/${segment(String(port))}`);
  }

  async getExposedPorts(_options: ExposedPortsOptions = {}): Promise<ExposedPort[]> {
    return (await this.#json<{ ports: ExposedPort[] }>("GET", "/ports")).ports;
  }

  // ── the sandbox as a whole ───────────────────────────────────────────────

  configure(config: SandboxConfig): Promise<void> {
    return this.#json("PATCH", "/config", { body: config });
  }

  info(): Promise<SandboxInfo> {
    return this.#json("GET", "");
  }

  getInfo(): Promise<SandboxDetails> {
    return this.#json("GET", "/info");
  }

  async getInstructions(): Promise<string> {
    return (await this.#json<{ instructions: string }>("GET", "/instructions")).instructions;
  }

  detectIsolation(): Promise<IsolationSupport> {
    return this.#json("GET", "/isolation");
  }

  destroy(options: DestroyOptions = {}): Promise<void> {
    return this.#json("DELETE", "", { query: { keep: options.keep } });
  }

  // ── snapshots ────────────────────────────────────────────────────────────

  async createBackup(options: CreateBackupOptions = {}): Promise<BackupInfo> {
    return (await this.#json<{ backup: BackupInfo }>("POST", "/backups", { body: options })).backup;
  }

  async listBackups(): Promise<BackupInfo[]> {
    return (await this.#json<{ backups: BackupInfo[] }>("GET", "/backups")).backups;
  }

  restoreBackup(id: string): Promise<RestoreBackupResult> {
    return this.#json("POST", `/backups/${segment(id)}/restore`);
  }

  deleteBackup(id: string): Promise<DeleteBackupResult> {
    return this.#json("DELETE", `/backups/${segment(id)}`);
  }

  async exportArchive(options: ExportArchiveOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const response = await this.#request("POST", "/archive/export", { body: options });
    if (!response.body) throw new SandboxConnectionError("/archive/export: response without a body");
    return response.body;
  }

  importArchive(body: ReadableStream<Uint8Array>): Promise<ImportArchiveResult> {
    return this.#json("PUT", "/archive", { bytes: body });
  }
}

/** The bare transport: SandboxRpc over /v1, without the client's handles and reconnects. */
export function httpRpc(id: string, options: HttpSandboxOptions): SandboxRpc {
  assertSandboxId(id);
  return new HttpTransport(id, options);
}

export function getHttpSandbox(id: string, options: HttpSandboxOptions): SandboxClient {
  return new SandboxClient(id, { rpc: httpRpc(id, options), retry: options.retry });
}
