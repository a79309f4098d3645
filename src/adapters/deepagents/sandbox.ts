/**
 * EdgeDeepAgentsSandbox: a deepagents sandbox backend (`BaseSandbox`) on a sandbox of this service.
 * BaseSandbox derives ls, read, write, edit, grep and glob from the three primitives given here:
 * `execute` (a shell command), `uploadFiles` and `downloadFiles` (bytes). Like the other providers
 * it is used after `initialize()` (or made with `create()`), and `close()` ends it: here that stops
 * the sandbox's container.
 */
import { BaseSandbox, SandboxError, type ExecuteResponse, type FileDownloadResponse, type FileUploadResponse } from "deepagents";
import { SandboxError as ServiceError, type SandboxClient } from "../../client/index.ts";
import { connect } from "../shared/connection.ts";
import { executeInSandbox } from "./execute.ts";
import { downloadFiles, uploadFiles } from "./file-transfer.ts";
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_SECONDS, type EdgeDeepAgentsSandboxOptions } from "./options.ts";

export class EdgeDeepAgentsSandbox extends BaseSandbox {
  /** The sandbox client underneath, for what the backend protocol does not cover. */
  readonly client: SandboxClient;
  readonly #id: string;
  readonly #initialFiles: EdgeDeepAgentsSandboxOptions["initialFiles"];
  readonly #defaultTimeout: number;
  readonly #maxOutputBytes: number;
  #running = false;
  #workspace: string | undefined;

  constructor(options: EdgeDeepAgentsSandboxOptions) {
    super();
    this.client = connect(options);
    this.#id = options.sandboxId;
    this.#initialFiles = options.initialFiles;
    this.#defaultTimeout = options.defaultTimeout ?? DEFAULT_TIMEOUT_SECONDS;
    this.#maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  }

  /** Makes the sandbox and initializes it: the recommended way to get one. */
  static async create(options: EdgeDeepAgentsSandboxOptions): Promise<EdgeDeepAgentsSandbox> {
    const sandbox = new EdgeDeepAgentsSandbox(options);
    await sandbox.initialize();
    return sandbox;
  }

  /** The sandbox id. */
  get id(): string {
    return this.#id;
  }

  get isRunning(): boolean {
    return this.#running;
  }

  /** Absolute path of the sandbox's workspace (known after initialize()): where commands start and files may be written. */
  get workspace(): string | undefined {
    return this.#workspace;
  }

  /**
   * Reaches the sandbox and writes `initialFiles`. A wrong URL or token fails here, with the
   * service's error code (UNAUTHORIZED, CONNECTION_FAILED, …).
   */
  async initialize(): Promise<void> {
    if (this.#running) throw new SandboxError("The sandbox is already initialized", "ALREADY_INITIALIZED");
    try {
      this.#workspace = (await this.client.getInfo()).workspace;
    } catch (error) {
      // The service's own code (UNAUTHORIZED, CONNECTION_FAILED, …) says what went wrong.
      const code = error instanceof ServiceError ? error.code : "NOT_INITIALIZED";
      throw new SandboxError(`Cannot reach the sandbox "${this.#id}": ${error instanceof Error ? error.message : String(error)}`, code, asError(error));
    }
    this.#running = true;
    const files = Object.entries(this.#initialFiles ?? {});
    if (files.length === 0) return;
    const encoder = new TextEncoder();
    const results = await this.uploadFiles(files.map(([path, content]) => [path, typeof content === "string" ? encoder.encode(content) : content]));
    const failed = results.filter((result) => result.error !== null);
    if (failed.length > 0) {
      throw new SandboxError(`Failed to upload initial files: ${failed.map((f) => `${f.path}: ${f.error}`).join(", ")}`, "FILE_OPERATION_FAILED");
    }
  }

  /** Stops the sandbox's container (its processes end) and marks this backend as no longer running. */
  async close(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    await this.client.destroy();
  }

  /**
   * Runs a shell command in the workspace. `output` is stdout and stderr in the order they came;
   * `timeout` (seconds, 0: none) overrides `defaultTimeout`.
   */
  async execute(command: string, options: { timeout?: number } = {}): Promise<ExecuteResponse> {
    this.#assertRunning();
    const seconds = options.timeout ?? this.#defaultTimeout;
    return executeInSandbox(this.client, command, {
      timeoutMs: seconds > 0 ? Math.round(seconds * 1000) : undefined,
      maxOutputBytes: this.#maxOutputBytes,
    });
  }

  async uploadFiles(files: Array<[string, Uint8Array]>): Promise<FileUploadResponse[]> {
    this.#assertRunning();
    return uploadFiles(this.client, files);
  }

  async downloadFiles(paths: string[]): Promise<FileDownloadResponse[]> {
    this.#assertRunning();
    return downloadFiles(this.client, paths);
  }

  #assertRunning(): void {
    if (!this.#running) {
      throw new SandboxError("The sandbox is not initialized: call initialize() or use EdgeDeepAgentsSandbox.create()", "NOT_INITIALIZED");
    }
  }
}

function asError(error: unknown): Error | undefined {
  return error instanceof Error ? error : undefined;
}
