/**
 * EdgeSandbox: a Mastra workspace sandbox (`MastraSandbox`) backed by a sandbox of this service, so
 * an agent written for LocalSandbox, E2B or Daytona runs here unchanged. `id` is the sandbox id;
 * `start()` reaches the service (a bad URL or token fails here) and applies the isolation options;
 * `stop()` only lets go (the sandbox, its files and its processes stay); `destroy()` stops the
 * sandbox's container. Mastra's base class adds status tracking and race-safe lifecycle wrappers.
 */
import {
  MastraSandbox,
  type CommandResult,
  type ExecuteCommandOptions,
  type ProviderStatus,
  type SandboxDetectionResult,
  type SandboxFileInput,
  type SandboxInfo,
  type WriteFilesOptions,
} from "@mastra/core/workspace";
import type { SandboxClient, SandboxConfig, SandboxDetails } from "../../client/index.ts";
import { connect, type SandboxConnection } from "../shared/connection.ts";
import { executeCommand as runCommand } from "./execute-command.ts";
import { isolationConfig, type EdgeSandboxOptions } from "./options.ts";
import { EdgeProcessManager } from "./process-manager.ts";
import { detectionResult, sandboxInfo } from "./sandbox-info.ts";
import { writeFiles } from "./write-files.ts";

/** What Workspace passes to getInstructions(): the request context of the call. */
type InstructionsRequest = { requestContext?: Parameters<Extract<NonNullable<EdgeSandboxOptions["instructions"]>, Function>>[0]["requestContext"] };

export class EdgeSandbox extends MastraSandbox {
  readonly id: string;
  readonly name = "EdgeSandbox";
  readonly provider = "edge";
  status: ProviderStatus = "pending";
  declare readonly processes: EdgeProcessManager;
  /** The sandbox client underneath, for what Mastra's contract does not cover (files, sessions, …). */
  readonly client: SandboxClient;
  readonly #isolation: SandboxConfig | undefined;
  readonly #timeout: number | undefined;
  readonly #instructions: EdgeSandboxOptions["instructions"];
  readonly #createdAt = new Date();
  #details: SandboxDetails | undefined;
  #serviceInstructions: string | undefined;

  constructor(options: EdgeSandboxOptions) {
    // Refused before anything else: an isolation this sandbox cannot give.
    const isolation = isolationConfig(options);
    const { onStart, onStop, onDestroy, env, workingDirectory } = options;
    super({
      name: "EdgeSandbox",
      processes: new EdgeProcessManager(),
      ...(onStart === undefined ? {} : { onStart }),
      ...(onStop === undefined ? {} : { onStop }),
      ...(onDestroy === undefined ? {} : { onDestroy }),
      ...(env === undefined ? {} : { env }),
      ...(workingDirectory === undefined ? {} : { workingDirectory }),
    });
    this.id = options.sandboxId;
    this.client = connect(options);
    this.#isolation = isolation;
    this.#timeout = options.timeout;
    this.#instructions = options.instructions;
  }

  /** What isolation the machine running the sandbox offers, in LocalSandbox.detectIsolation() terms. */
  static async detectIsolation(connection: SandboxConnection): Promise<SandboxDetectionResult> {
    return detectionResult(await connect(connection).detectIsolation());
  }

  override async start(): Promise<void> {
    if (this.#isolation) await this.client.configure(this.#isolation);
    // Both reach the sandbox's container: a wrong URL or token, or an isolation the machine lacks, fails here.
    const [details, instructions] = await Promise.all([this.client.getInfo(), this.client.getInstructions()]);
    this.#details = details;
    this.#serviceInstructions = instructions;
    if (this.workingDirectory === undefined) this.setWorkingDirectory(details.workspace);
  }

  /** Lets go of the sandbox: stops following its processes. They, and its files, stay. */
  override async stop(): Promise<void> {
    this.processes.detachAll();
  }

  /** Stops the sandbox's container now (its processes are killed); files in its workspace stay. */
  override async destroy(): Promise<void> {
    this.processes.detachAll();
    await this.client.destroy();
  }

  /** @deprecated Use `status === 'running'` instead. */
  async isReady(): Promise<boolean> {
    return this.status === "running";
  }

  /** Status, and while running the sandbox's resources and isolation as the service reports them now. */
  override async getInfo(): Promise<SandboxInfo> {
    if (this.status === "running") this.#details = await this.client.getInfo();
    return sandboxInfo(this, this.status === "running" ? this.#details : undefined, this.#createdAt);
  }

  /** The service's description of the sandbox (known after start()), unless `instructions` replaces it. */
  override getInstructions(request?: InstructionsRequest): string {
    const defaultInstructions =
      this.#serviceInstructions ?? `Commands run in the sandbox "${this.id}"; relative paths resolve in its workspace.`;
    const override = this.#instructions;
    if (override === undefined) return defaultInstructions;
    if (typeof override === "string") return override;
    return override({ defaultInstructions, ...(request?.requestContext === undefined ? {} : { requestContext: request.requestContext }) });
  }

  override async executeCommand(command: string, args?: string[], options?: ExecuteCommandOptions): Promise<CommandResult> {
    return runCommand(this, command, args, options, this.#timeout);
  }

  override async writeFiles(files: SandboxFileInput[], options?: WriteFilesOptions): Promise<void> {
    await this.ensureRunning();
    await writeFiles(this.client, files, options);
  }
}
