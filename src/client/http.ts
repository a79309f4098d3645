/**
 * getHttpSandbox(id, {url, token}) — the same sandbox API for callers outside Workers (Node, Deno,
 * browsers, other clouds), over the Worker's /v1 HTTP API. Streams reconnect by themselves from the
 * last event id when a connection breaks, as they do over Workers RPC (the client does it, with the
 * `retry` policy given here: bounded retries with backoff, then SandboxConnectionError). A run named
 * by an idempotency key or a process id is sent again the same way when its connection fails before
 * the answer: the sandbox runs it at most once, and the retry gets the first run's answer.
 */
import { errorFromBody, errorFromResponse } from "../rpc/error-response.ts";
import { isErrorResponse } from "../../protocol/errors.ts";
import { ProcessNotFoundError, SandboxConnectionError } from "../rpc/errors.ts";
import { fileStreamInfo } from "../rpc/file-headers.ts";
import type { FileStream, WriteFileResult, WriteStreamOptions } from "../rpc/files.ts";
import type { HandleRef, ProcessRecord, StdinOptions, StdinResult } from "../rpc/processes.ts";
import { terminalInputBody, type TerminalWriteResult } from "../rpc/terminals.ts";
import type { ExportArchiveOptions, ImportArchiveOptions, ImportArchiveResult } from "../rpc/backups.ts";
import type { SandboxRpc } from "../rpc/sandbox-rpc.ts";
import type { ExposedPort, ExposePortOptions } from "../rpc/ports.ts";
import type { EnvVarsUpdate, SetEnvOptions } from "../rpc/sessions.ts";
import { API_METHODS, type ApiMethod } from "../rpc/bindings/index.ts";
import type { RetryPolicy } from "../rpc/resumable-stream.ts";
import { assertSandboxId } from "./sandbox-id.ts";
import { SandboxClient } from "./sandbox-client.ts";
import type { ClientOptions } from "./connection.ts";
import { derivedCalls, pathOf, type Query } from "./http-calls.ts";

export interface HttpSandboxOptions extends ClientOptions {
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

/** A JSON body naming its run (an idempotency key, a process id): sending it again cannot start a second run. */
function namesItsRun(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const { idempotencyKey, processId } = body as { idempotencyKey?: unknown; processId?: unknown };
  return typeof idempotencyKey === "string" || typeof processId === "string";
}

/** The verb and filled-in path of a method's binding, for the calls written here. */
const route = (name: ApiMethod, ...values: string[]): [string, string] => [API_METHODS[name].verb, pathOf(API_METHODS[name], ...values)];

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
    const retries = namesItsRun(init.body) ? (this.#options.retry?.attempts ?? 5) : 0;
    const baseDelayMs = this.#options.retry?.baseDelayMs ?? 100;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.#fetch(url, request);
      } catch (error) {
        if (attempt < retries) {
          await new Promise((resolve) => setTimeout(resolve, baseDelayMs * 2 ** attempt));
          continue;
        }
        throw new SandboxConnectionError(`Cannot reach the sandbox service at ${this.#options.url}: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      }
      if (!response.ok) throw await errorFromResponse(response);
      return response;
    }
  }

  async #json<T>(method: string, path: string, init?: RequestParts): Promise<T> {
    const response = await this.#request(method, path, init);
    if (response.status === 204) return undefined as T;
    const answer: unknown = await response.json();
    // An answer begun before its end was known (a buffered code run) says an error in its body.
    if (isErrorResponse(answer)) throw errorFromBody(answer, answer.httpStatus);
    return answer as T;
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
      return (await this.#json<{ process: ProcessRecord }>(...route("getProcess", id), { query: { generation: ref.generation } })).process;
    } catch (error) {
      if (error instanceof ProcessNotFoundError) return null;
      throw error;
    }
  }

  writeStdin(id: string, data: string, options: StdinOptions = {}): Promise<StdinResult> {
    const { generation, ...body } = options;
    return this.#json(...route("writeStdin", id), { query: { generation }, body: { data, ...body } });
  }

  closeStdin(id: string, ref: HandleRef = {}): Promise<StdinResult> {
    return this.#json(...route("closeStdin", id), { query: { generation: ref.generation }, body: { close: true } });
  }

  // ── sessions, env ────────────────────────────────────────────────────────

  async setEnvVars(vars: EnvVarsUpdate, options: SetEnvOptions = {}): Promise<void> {
    // JSON has no undefined: null unsets.
    const update = Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, value ?? null]));
    await this.#json(...route("setEnvVars"), { body: { vars: update, ...options } });
  }

  // ── files ────────────────────────────────────────────────────────────────

  writeFileStream(path: string, body: ReadableStream<Uint8Array>, options: WriteStreamOptions = {}): Promise<WriteFileResult> {
    const mode = typeof options.mode === "number" ? options.mode.toString(8) : options.mode;
    return this.#json(...route("writeFileStream"), { query: { path, createParents: options.createParents, mode }, bytes: body });
  }

  async readFileStream(path: string): Promise<FileStream> {
    const response = await this.#request(...route("readFileStream"), { query: { path } });
    if (!response.body) throw new SandboxConnectionError(`${path}: response without a body`);
    return { ...fileStreamInfo(response.headers, path), stream: response.body };
  }

  // ── terminals ────────────────────────────────────────────────────────────

  writeTerminal(id: string, data: string | Uint8Array): Promise<TerminalWriteResult> {
    return this.#json(...route("writeTerminal", id), { body: terminalInputBody(data) });
  }

  /** Where fetch can upgrade (Workers): the 101 response with the socket. `?since=` of `request` is passed on. */
  async connectTerminal(id: string, request: Request): Promise<Response> {
    const since = new URL(request.url).searchParams.get("since") ?? undefined;
    return this.#request(...route("connectTerminal", id), { query: { since }, headers: { upgrade: "websocket" } });
  }

  // ── preview ports ────────────────────────────────────────────────────────

  /** URLs are made on the service's origin (or its preview domain): an `origin` (or `hostname`) given here is not needed. */
  exposePort(port: number, options: ExposePortOptions = {}): Promise<ExposedPort> {
    const { origin: _origin, hostname: _hostname, ...rest } = options;
    return this.#json(...route("exposePort"), { body: { ...rest, port } });
  }

  // ── archives ─────────────────────────────────────────────────────────────

  async exportArchive(options: ExportArchiveOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const response = await this.#request(...route("exportArchive"), { body: options });
    if (!response.body) throw new SandboxConnectionError(`${API_METHODS.exportArchive.path}: response without a body`);
    return response.body;
  }

  importArchive(body: ReadableStream<Uint8Array>, options: ImportArchiveOptions = {}): Promise<ImportArchiveResult> {
    return this.#json(...route("importArchive"), { bytes: body, ...(options.dir === undefined ? {} : { query: { dir: options.dir } }) });
  }
}

/** The bare transport: SandboxRpc over /v1, without the client's handles and reconnects. */
export function httpRpc(id: string, options: HttpSandboxOptions): SandboxRpc {
  assertSandboxId(id);
  return new HttpTransport(id, options);
}

export function getHttpSandbox(id: string, options: HttpSandboxOptions): SandboxClient {
  return new SandboxClient(id, { rpc: httpRpc(id, options), retry: options.retry, enableDefaultSession: options.enableDefaultSession });
}
